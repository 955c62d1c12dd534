db = db.getSiblingDB('schemalab_corpus_147');
db.dropDatabase();
const v = db.version();
print(typeof v, /^\d+\.\d+/.test(v));
