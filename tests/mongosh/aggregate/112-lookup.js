db = db.getSiblingDB('schemalab_corpus_112');
db.dropDatabase();
db.orders.insertMany([{ _id: 1, cust: 'c1' }, { _id: 2, cust: 'c2' }]);
db.customers.insertMany([{ _id: 'c1', name: 'Ann' }]);
printjson(db.orders.aggregate([
  { $lookup: { from: 'customers', localField: 'cust', foreignField: '_id', as: 'c' } },
  { $project: { cust: 1, names: '$c.name' } },
]).toArray());
