db = db.getSiblingDB('schemalab_corpus_124');
db.dropDatabase();
db.c.createIndex({ a: 1 });
db.c.createIndex({ b: 1 });
printjson(db.c.dropIndexes());
printjson(db.c.getIndexes().map(i => i.name));
