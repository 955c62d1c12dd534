db = db.getSiblingDB('schemalab_corpus_081');
db.dropDatabase();
const r = db.c.bulkWrite([
  { updateOne: { filter: { _id: 5 }, update: { $set: { k: 1 } }, upsert: true } },
  { insertOne: { document: { _id: 6, k: 1 } } },
  { deleteMany: { filter: { k: 1 } } },
]);
print(r.upsertedCount, r.insertedCount, r.deletedCount);
printjson(r.upsertedIds);
