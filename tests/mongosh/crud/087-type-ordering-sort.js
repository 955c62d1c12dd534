db = db.getSiblingDB('schemalab_corpus_087');
db.dropDatabase();
db.c.insertMany([{ _id: 1, v: 'str' }, { _id: 2, v: 10 }, { _id: 3, v: null }, { _id: 4, v: { o: 1 } }, { _id: 5, v: [0] }, { _id: 6, v: true }]);
print(db.c.find().sort({ v: 1, _id: 1 }).toArray().map(d => d._id).join(','));
