db = db.getSiblingDB('schemalab_corpus_077');
db.dropDatabase();
db.c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 2 }, { _id: 3, a: 2 }]);
print(db.c.countDocuments({}));
print(db.c.countDocuments({ a: 2 }));
print(db.c.countDocuments({}, { skip: 1, limit: 1 }));
print(db.nothing.countDocuments({}));
