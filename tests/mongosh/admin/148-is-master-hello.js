db = db.getSiblingDB('schemalab_corpus_148');
db.dropDatabase();
const h = db.runCommand({ hello: 1 });
print(h.isWritablePrimary, h.ok, typeof h.maxBsonObjectSize);
