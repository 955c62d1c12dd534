db = db.getSiblingDB('schemalab_corpus_122');
db.dropDatabase();
db.c.createIndex({ a: 1 });
db.c.createIndex({ b: 1 }, { sparse: true });
printjson(db.c.getIndexes().map(i => ({ name: i.name, key: i.key, sparse: i.sparse })));
