db = db.getSiblingDB('schemalab_corpus_073');
db.dropDatabase();
db.c.insertMany([{ _id: 1, k: 'a' }, { _id: 2, k: 'a' }, { _id: 3, k: 'b' }]);
printjson(db.c.deleteOne({ k: 'a' }));
printjson(db.c.deleteMany({ k: { $in: ['a', 'b'] } }));
printjson(db.c.deleteMany({}));
print(db.c.countDocuments({}));
