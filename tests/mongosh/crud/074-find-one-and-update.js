db = db.getSiblingDB('schemalab_corpus_074');
db.dropDatabase();
db.c.insertOne({ _id: 1, n: 1 });
printjson(db.c.findOneAndUpdate({ _id: 1 }, { $inc: { n: 1 } }));
printjson(db.c.findOneAndUpdate({ _id: 1 }, { $inc: { n: 1 } }, { returnDocument: 'after' }));
printjson(db.c.findOneAndUpdate({ _id: 2 }, { $set: { n: 0 } }, { upsert: true, returnNewDocument: true }));
print(db.c.findOneAndUpdate({ _id: 3 }, { $set: { n: 0 } }));
