db = db.getSiblingDB('schemalab_corpus_054');
db.dropDatabase();
print(typeof db.getMongo());
print(typeof db.getSiblingDB);
print(typeof db.c.find);
