db = db.getSiblingDB('schemalab_corpus_116');
db.dropDatabase();
db.sales.insertMany([
  { _id: 1, item: 'a', qty: 2, price: 10, tags: ['x', 'y'] },
  { _id: 2, item: 'b', qty: 1, price: 20, tags: ['y'] },
  { _id: 3, item: 'a', qty: 5, price: 10, tags: [] },
]);

const cur = db.sales.aggregate([{ $sort: { _id: 1 } }]);
print(cur.hasNext(), cur.next()._id);
cur.forEach(d => print('rest', d._id));
print(db.sales.aggregate([]).itcount());
