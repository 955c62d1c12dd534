db = db.getSiblingDB('schemalab_corpus_135');
db.dropDatabase();
printjson(db.runCommand({ ping: 1 }));
print(db.runCommand({ ping: 1 }).ok);
