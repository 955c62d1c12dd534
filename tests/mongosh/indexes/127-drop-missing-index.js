db = db.getSiblingDB('schemalab_corpus_127');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
try {
  db.c.dropIndex('nope_1');
} catch (e) {
  print(e.name, e.codeName);
}
