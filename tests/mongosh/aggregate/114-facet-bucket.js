db = db.getSiblingDB('schemalab_corpus_114');
db.dropDatabase();
db.sales.insertMany([
  { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
  { _id: 2, item: 'b', qty: 1, price: 20, tags: ['y'] },
  { _id: 3, item: 'a', qty: 5, price: 10, tags: [] },
]);

printjson(db.sales.aggregate([
  { $facet: {
      byItem: [{ $sortByCount: '$item' }],
      qtyStats: [{ $group: { _id: null, max: { $max: '$qty' }, avg: { $avg: '$qty' } } }],
  } },
]).toArray());
