db = db.getSiblingDB('schemalab_corpus_065');
db.dropDatabase();
db.c.insertOne({ _id: 1, a: 1 });
const r = db.c.updateOne({ _id: 1 }, { $set: { a: 2, 'b.c': 3 } });
printjson(r);
printjson(db.c.findOne());
