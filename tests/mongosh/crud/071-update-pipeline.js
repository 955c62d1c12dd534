db = db.getSiblingDB('schemalab_corpus_071');
db.dropDatabase();
db.c.insertMany([{ _id: 1, a: 2, b: 3 }, { _id: 2, a: 5, b: 5 }]);
db.c.updateMany({}, [{ $set: { sum: { $add: ['$a', '$b'] } } }]);
printjson(db.c.find().toArray());
