db = db.getSiblingDB('schemalab_corpus_202');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
try {
  db.c.updateOne({ _id: 1 }, { a: 1 });
} catch (e) {
  print(e.name);
  print(e.message);
}
