db = db.getSiblingDB('schemalab_corpus_206');
db.dropDatabase();
db.c.insertOne({ _id: 1, a: 1 });
try {
  db.c.updateOne({ _id: 1 }, { $set: { _id: 2 } });
} catch (e) {
  print(e.name, e.code, e.codeName);
}
printjson(db.c.findOne());
