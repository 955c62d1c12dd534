db = db.getSiblingDB('schemalab_corpus_096');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

const a = db.c.find().limit(2).sort({ n: -1 }).toArray().map(d => d.n);
const b = db.c.find().sort({ n: -1 }).limit(2).toArray().map(d => d.n);
printjson(a);
printjson(b);
