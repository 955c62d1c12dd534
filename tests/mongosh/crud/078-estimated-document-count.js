db = db.getSiblingDB('schemalab_corpus_078');
db.dropDatabase();
db.c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }, { _id: 4 }]);
print(db.c.estimatedDocumentCount());
print(db.empty.estimatedDocumentCount());
