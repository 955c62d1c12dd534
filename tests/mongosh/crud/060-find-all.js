db = db.getSiblingDB('schemalab_corpus_060');
db.dropDatabase();
db.c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 2 }, { _id: 3, a: 3 }]);
printjson(db.c.find().toArray());
printjson(db.c.find({ a: { $gte: 2 } }).toArray());
