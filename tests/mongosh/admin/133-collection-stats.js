db = db.getSiblingDB('schemalab_corpus_133');
db.dropDatabase();
db.c.insertMany([{ _id: 1, a: 'x' }, { _id: 2, a: 'y' }]);
const st = db.c.stats();
print(st.ns, st.count, st.nindexes, st.ok);
printjson(Object.keys(st.indexSizes));
