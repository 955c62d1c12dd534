db = db.getSiblingDB('schemalab_corpus_066');
db.dropDatabase();
printjson(db.c.updateOne({ _id: 9 }, { $set: { a: 1 } }));
printjson(db.c.updateOne({ _id: 9 }, { $set: { a: 1 } }, { upsert: true }));
printjson(db.c.findOne({ _id: 9 }));
