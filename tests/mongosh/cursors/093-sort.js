db = db.getSiblingDB('schemalab_corpus_093');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

print(db.c.find().sort({ n: -1 }).toArray().map(d => d._id).join(','));
print(db.c.find().sort({ s: 1 }).toArray().map(d => d.s).join(''));
print(db.c.find().sort({ n: 1 }).toArray().map(d => d.n).join(','));
