db = db.getSiblingDB('schemalab_corpus_058');
db.dropDatabase();
try {
  db.c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }], { ordered: false });
} catch (e) {
  print(e.name);
  print(e.writeErrors.length, e.writeErrors[0].index, e.writeErrors[0].code);
}
print(db.c.countDocuments({}));
