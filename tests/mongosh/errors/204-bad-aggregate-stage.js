db = db.getSiblingDB('schemalab_corpus_204');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
try {
  db.c.aggregate([{ $nonsense: {} }]).toArray();
} catch (e) {
  print(e.name, e.code);
  print(e.message);
}
