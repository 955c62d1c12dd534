db = db.getSiblingDB('schemalab_corpus_067');
db.dropDatabase();
db.c.insertMany([{ _id: 1, g: 'x', n: 1 }, { _id: 2, g: 'x', n: 2 }, { _id: 3, g: 'y', n: 3 }]);
const r = db.c.updateMany({ g: 'x' }, { $inc: { n: 10 } });
print(r.matchedCount, r.modifiedCount);
printjson(db.c.find({}, { _id: 0, n: 1 }).toArray());
