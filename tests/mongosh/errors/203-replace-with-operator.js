db = db.getSiblingDB('schemalab_corpus_203');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
try {
  db.c.replaceOne({ _id: 1 }, { $set: { a: 1 } });
} catch (e) {
  print(e.name);
  print(e.message);
}
