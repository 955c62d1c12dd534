db = db.getSiblingDB('schemalab_corpus_097');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

db.c.createIndex({ n: 1 });
printjson(db.c.find({ n: { $gt: 15 } }).hint({ n: 1 }).toArray().map(d => d._id));
printjson(db.c.find().hint('n_1').limit(1).toArray());
