db = db.getSiblingDB('schemalab_corpus_048');
db.dropDatabase();
printjson(db.createCollection('fresh'));
print(db.getCollectionNames().includes('fresh'));
try { db.createCollection('fresh'); } catch (e) { print(e.name, e.codeName); }
