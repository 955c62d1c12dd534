db = db.getSiblingDB('schemalab_corpus_106');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

print(db.c.find({ _id: { $lt: 3 } }).sort({ _id: 1 }));
printjson(db.c.find({ _id: 4 }));
