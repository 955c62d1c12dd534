db = db.getSiblingDB('schemalab_corpus_064');
db.dropDatabase();
db.c.insertMany([
  { _id: 1, items: [{ sku: 'a', q: 1 }, { sku: 'b', q: 5 }] },
  { _id: 2, items: [{ sku: 'a', q: 5 }] },
]);
const ids = q => db.c.find(q).toArray().map(d => d._id).join(',');
print(ids({ items: { $elemMatch: { sku: 'a', q: { $gt: 2 } } } }));
print(ids({ 'items.sku': 'b' }));
print(ids({ 'items.q': { $gte: 5 } }));
