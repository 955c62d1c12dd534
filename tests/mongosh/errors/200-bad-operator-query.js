db = db.getSiblingDB('schemalab_corpus_200');
db.dropDatabase();
try {
  db.c.find({ a: { $notAnOperator: 1 } }).toArray();
} catch (e) {
  print(e.name, e.code, e.codeName);
  print(e.message);
}
