db = db.getSiblingDB('schemalab_corpus_045');
db.dropDatabase();
print(db.getName());
print(typeof db.getName());
print(db.c.getDB().getName());
print(String(db));
