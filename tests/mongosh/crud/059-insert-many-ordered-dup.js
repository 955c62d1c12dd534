db = db.getSiblingDB('schemalab_corpus_059');
db.dropDatabase();
try {
  db.c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }]);
} catch (e) {
  print(e.name, e.code);
}
print(db.c.countDocuments({}));
