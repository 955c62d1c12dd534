db = db.getSiblingDB('schemalab_corpus_199');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
try {
  db.c.insertOne({ _id: 1, x: 2 });
} catch (e) {
  print(e.name);
  print(e.code, e.codeName);
  print(e.message);
  printjson(e.keyValue);
}
