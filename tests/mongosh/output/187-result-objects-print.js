db = db.getSiblingDB('schemalab_corpus_187');
db.dropDatabase();
print(db.c.insertOne({ _id: 1 }));
print(db.c.insertMany([{ _id: 2 }, { _id: 3 }]));
print(db.c.updateOne({ _id: 1 }, { $set: { a: 1 } }));
print(db.c.deleteOne({ _id: 3 }));
print(db.c.replaceOne({ _id: 2 }, { b: 1 }));
