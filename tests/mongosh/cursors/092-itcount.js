db = db.getSiblingDB('schemalab_corpus_092');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

print(db.c.find().itcount());
print(db.c.find({ n: { $lt: 25 } }).itcount());
const cur = db.c.find();
cur.next();
print(cur.itcount());
