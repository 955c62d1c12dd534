db = db.getSiblingDB('schemalab_corpus_099');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

print(db.c.find().count());
print(db.c.find({ n: { $gt: 15 } }).count());
print(db.c.find().limit(2).size());
print(db.c.find().limit(2).count());
