db = db.getSiblingDB('schemalab_corpus_056');
db.dropDatabase();
const r = db.c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
printjson(r);
print(Object.keys(r.insertedIds).length);
print(db.c.countDocuments({}));
