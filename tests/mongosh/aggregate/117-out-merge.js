db = db.getSiblingDB('schemalab_corpus_117');
db.dropDatabase();
db.sales.insertMany([
  { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
  { _id: 2, item: 'b', qty: 1, price: 20, tags: ['y'] },
  { _id: 3, item: 'a', qty: 5, price: 10, tags: [] },
]);

db.sales.aggregate([{ $group: { _id: '$item', q: { $sum: '$qty' } } }, { $out: 'totals' }]);
printjson(db.totals.find().sort({ _id: 1 }).toArray());
db.sales.aggregate([{ $match: { _id: 2 } }, { $project: { q: '$qty' } }, { $merge: { into: 'totals' } }]);
print(db.totals.countDocuments({}));
