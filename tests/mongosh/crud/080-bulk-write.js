db = db.getSiblingDB('schemalab_corpus_080');
db.dropDatabase();
db.c.insertOne({ _id: 1, n: 1 });
const r = db.c.bulkWrite([
  { insertOne: { document: { _id: 2, n: 2 } } },
  { updateOne: { filter: { _id: 1 }, update: { $inc: { n: 10 } } } },
  { replaceOne: { filter: { _id: 2 }, replacement: { n: 20 } } },
  { deleteOne: { filter: { _id: 3 } } },
  { updateMany: { filter: {}, update: { $set: { t: 1 } } } },
]);
print(r.acknowledged, r.insertedCount, r.matchedCount, r.modifiedCount, r.deletedCount, r.upsertedCount);
printjson(db.c.find().toArray());
