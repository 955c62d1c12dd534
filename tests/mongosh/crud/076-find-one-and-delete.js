db = db.getSiblingDB('schemalab_corpus_076');
db.dropDatabase();
db.c.insertMany([{ _id: 1, p: 3 }, { _id: 2, p: 1 }, { _id: 3, p: 2 }]);
printjson(db.c.findOneAndDelete({}, { sort: { p: 1 } }));
printjson(db.c.findOneAndDelete({ _id: 1 }));
print(db.c.findOneAndDelete({ _id: 99 }));
print(db.c.countDocuments({}));
