db = db.getSiblingDB('schemalab_corpus_123');
db.dropDatabase();
db.c.createIndex({ a: 1 });
db.c.createIndex({ b: 1 });
printjson(db.c.dropIndex('a_1'));
printjson(db.c.dropIndex({ b: 1 }));
printjson(db.c.getIndexes().map(i => i.name));
