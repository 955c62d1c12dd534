db = db.getSiblingDB('schemalab_corpus_111');
db.dropDatabase();
db.sales.insertMany([
  { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
  { _id: 2, item: 'b', qty: 1, price: 20, tags: ['y'] },
  { _id: 3, item: 'a', qty: 5, price: 10, tags: [] },
]);

printjson(db.sales.aggregate([{ $unwind: '$tags' }, { $project: { tags: 1 } }]).toArray());
printjson(db.sales.aggregate([{ $unwind: { path: '$tags', preserveNullAndEmptyArrays: true } }, { $count: 'n' }]).toArray());
