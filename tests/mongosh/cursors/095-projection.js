db = db.getSiblingDB('schemalab_corpus_095');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

printjson(db.c.find().sort({ _id: 1 }).limit(2).projection({ _id: 0, s: 1 }).toArray());
