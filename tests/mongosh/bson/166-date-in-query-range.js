db = db.getSiblingDB('schemalab_corpus_166');
db.dropDatabase();
db.c.insertMany([
  { _id: 1, at: ISODate('2024-01-10T00:00:00Z') },
  { _id: 2, at: ISODate('2024-02-10T00:00:00Z') },
  { _id: 3, at: ISODate('2024-03-10T00:00:00Z') },
]);
print(db.c.find({ at: { $gte: ISODate('2024-02-01T00:00:00Z'), $lt: new Date('2024-03-01T00:00:00Z') } }).toArray().map(d => d._id).join(','));
printjson(db.c.aggregate([{ $group: { _id: null, last: { $max: '$at' } } }]).toArray());
