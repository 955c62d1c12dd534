db = db.getSiblingDB('schemalab_corpus_161');
db.dropDatabase();
db.c.insertMany([{ _id: 1, s: 'Alpha' }, { _id: 2, s: 'beta' }, { _id: 3, s: 'ALPS' }]);
print(db.c.find({ s: /^al/i }).toArray().map(d => d._id).join(','));
print(db.c.find({ s: new RegExp('a$') }).toArray().map(d => d._id).join(','));
print(db.c.find({ s: { $regex: '^B', $options: 'i' } }).toArray().map(d => d._id).join(','));
db.c.insertOne({ _id: 4, pattern: /x+y/m });
printjson(db.c.findOne({ _id: 4 }));
