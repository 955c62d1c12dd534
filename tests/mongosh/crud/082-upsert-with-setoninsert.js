db = db.getSiblingDB('schemalab_corpus_082');
db.dropDatabase();
for (let i = 0; i < 2; i++) {
  db.c.updateOne({ _id: 'k' }, { $inc: { hits: 1 }, $setOnInsert: { created: ISODate('2024-01-01T00:00:00Z') } }, { upsert: true });
}
printjson(db.c.findOne());
