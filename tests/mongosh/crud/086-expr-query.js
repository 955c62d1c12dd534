db = db.getSiblingDB('schemalab_corpus_086');
db.dropDatabase();
db.c.insertMany([{ _id: 1, spent: 5, budget: 10 }, { _id: 2, spent: 15, budget: 10 }]);
printjson(db.c.find({ $expr: { $gt: ['$spent', '$budget'] } }).toArray());
