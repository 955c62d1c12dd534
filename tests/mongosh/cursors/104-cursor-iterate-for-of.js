db = db.getSiblingDB('schemalab_corpus_104');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

for (const d of db.c.find({ n: { $gt: 25 } }).sort({ n: 1 })) print(d.s);
