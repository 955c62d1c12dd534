db = db.getSiblingDB('schemalab_corpus_063');
db.dropDatabase();
db.c.insertMany([
  { _id: 1, n: 5, t: ['a', 'b'], s: 'apple' },
  { _id: 2, n: 15, t: ['b'], s: 'banana' },
  { _id: 3, n: 25, s: 'cherry' },
]);
const ids = q => db.c.find(q).toArray().map(d => d._id).join(',');
print(ids({ n: { $gt: 5, $lt: 25 } }));
print(ids({ n: { $in: [5, 25] } }));
print(ids({ t: 'b' }));
print(ids({ t: { $exists: false } }));
print(ids({ $or: [{ n: 5 }, { s: 'cherry' }] }));
print(ids({ s: /an/ }));
print(ids({ t: { $size: 2 } }));
