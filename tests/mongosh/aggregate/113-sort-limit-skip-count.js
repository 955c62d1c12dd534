db = db.getSiblingDB('schemalab_corpus_113');
db.dropDatabase();
db.sales.insertMany([
  { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
  { _id: 2, item: 'b', qty: 1, price: 20, tags: ['y'] },
  { _id: 3, item: 'a', qty: 5, price: 10, tags: [] },
]);

printjson(db.sales.aggregate([{ $sort: { qty: -1 } }, { $skip: 1 }, { $limit: 1 }]).toArray());
printjson(db.sales.aggregate([{ $match: { item: 'a' } }, { $count: 'howMany' }]).toArray());
