db = db.getSiblingDB('schemalab_corpus_089');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

db.c.find().sort({ n: 1 }).forEach(d => print(d._id, d.s));
let total = 0;
db.c.find().forEach(function (d) { total += d.n; });
print(total);
