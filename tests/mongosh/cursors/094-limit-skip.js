db = db.getSiblingDB('schemalab_corpus_094');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

printjson(db.c.find().sort({ n: 1 }).skip(1).limit(2).toArray());
print(db.c.find().sort({ n: 1 }).limit(1).toArray()[0]._id);
print(db.c.find().skip(10).toArray().length);
