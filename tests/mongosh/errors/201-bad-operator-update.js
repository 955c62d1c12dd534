db = db.getSiblingDB('schemalab_corpus_201');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
try {
  db.c.updateOne({ _id: 1 }, { $sett: { a: 1 } });
} catch (e) {
  print(e.name, e.code);
  print(e.message);
}
