db = db.getSiblingDB('schemalab_corpus_069');
db.dropDatabase();
db.c.insertOne({ _id: 1, a: [1, 2, 3, 2], s: ['x'] });
db.c.updateOne({ _id: 1 }, { $pull: { a: 2 } });
db.c.updateOne({ _id: 1 }, { $addToSet: { s: { $each: ['x', 'y'] } } });
db.c.updateOne({ _id: 1 }, { $pop: { a: 1 } });
printjson(db.c.findOne());
db.c.updateOne({ _id: 1 }, { $push: { a: { $each: [9, 8], $sort: 1 } } });
printjson(db.c.findOne().a);
