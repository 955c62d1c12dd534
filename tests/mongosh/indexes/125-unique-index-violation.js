db = db.getSiblingDB('schemalab_corpus_125');
db.dropDatabase();
db.c.createIndex({ email: 1 }, { unique: true });
db.c.insertOne({ _id: 1, email: 'a@x' });
try {
  db.c.insertOne({ _id: 2, email: 'a@x' });
} catch (e) {
  print(e.name, e.code);
  print(e.message);
}
