db = db.getSiblingDB('schemalab_corpus_207');
db.dropDatabase();
db.c.insertOne({ _id: 1, a: { b: 1 } });
try {
  db.c.updateOne({ _id: 1 }, { $set: { a: 1, 'a.b': 2 } });
} catch (e) {
  print(e.name, e.code, e.codeName);
}
