db = db.getSiblingDB('schemalab_corpus_085');
db.dropDatabase();
db.c.insertMany([{ _id: 1, a: null }, { _id: 2 }, { _id: 3, a: 0 }]);
const ids = q => db.c.find(q).toArray().map(d => d._id).join(',');
print(ids({ a: null }));
print(ids({ a: { $exists: true } }));
print(ids({ a: { $type: 'null' } }));
print(ids({ a: { $ne: null } }));
