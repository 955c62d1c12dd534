db = db.getSiblingDB('schemalab_corpus_126');
db.dropDatabase();
print(db.c.createIndex({ a: 1 }));
print(db.c.createIndex({ a: 1 }));
print(db.c.getIndexes().length);
