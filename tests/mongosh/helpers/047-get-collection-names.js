db = db.getSiblingDB('schemalab_corpus_047');
db.dropDatabase();
db.b.insertOne({});
db.a.insertOne({});
db.createCollection('c');
printjson(db.getCollectionNames());
