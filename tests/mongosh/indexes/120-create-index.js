db = db.getSiblingDB('schemalab_corpus_120');
db.dropDatabase();
print(db.c.createIndex({ a: 1 }));
print(db.c.createIndex({ b: -1, a: 1 }));
print(db.c.createIndex({ u: 1 }, { unique: true, name: 'uniq_u' }));
