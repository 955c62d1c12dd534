db = db.getSiblingDB('schemalab_corpus_134');
db.dropDatabase();
db.a.insertOne({ _id: 1 });
db.b.insertMany([{ _id: 1 }, { _id: 2 }]);
const st = db.stats();
print(st.db, st.collections, st.objects, st.indexes, st.ok);
