db = db.getSiblingDB('schemalab_corpus_136');
db.dropDatabase();
printjson(db.adminCommand({ ping: 1 }));
printjson(db.getSiblingDB('admin').runCommand({ ping: 1 }));
