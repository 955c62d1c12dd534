db = db.getSiblingDB('schemalab_corpus_131');
db.dropDatabase();
db.src.insertMany([{ _id: 1 }, { _id: 2 }]);
printjson(db.src.renameCollection('dst'));
printjson(db.getCollectionNames());
print(db.dst.countDocuments({}));
