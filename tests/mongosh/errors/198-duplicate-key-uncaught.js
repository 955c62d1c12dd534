db = db.getSiblingDB('schemalab_corpus_198');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
print('inserted once');
db.c.insertOne({ _id: 1 });
print('not reached');
