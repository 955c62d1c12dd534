db = db.getSiblingDB('schemalab_corpus_115');
db.dropDatabase();
db.sales.insertMany([
  { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
  { _id: 2, item: 'b', qty: 1, price: 20, tags: ['y'] },
  { _id: 3, item: 'a', qty: 5, price: 10, tags: [] },
]);

printjson(db.sales.aggregate([
  { $sort: { _id: 1 } },
  { $group: { _id: '$item', first: { $first: '$qty' }, last: { $last: '$qty' }, qtys: { $push: '$qty' }, set: { $addToSet: '$price' } } },
  { $sort: { _id: 1 } },
]).toArray());
