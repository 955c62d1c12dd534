db = db.getSiblingDB('schemalab_corpus_098');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

const cur = db.c.find().sort({ _id: 1 }).batchSize(1);
print(cur.toArray().length);
print(db.c.find().batchSize(2).itcount());
