db = db.getSiblingDB('schemalab_corpus_072');
db.dropDatabase();
db.c.insertOne({ _id: 1, a: 1, b: 2 });
const r = db.c.replaceOne({ _id: 1 }, { c: 3 });
printjson(r);
printjson(db.c.findOne());
printjson(db.c.replaceOne({ _id: 2 }, { d: 4 }, { upsert: true }));
