db = db.getSiblingDB('schemalab_corpus_128');
db.dropDatabase();
db.c.createIndex({ g: 1, n: -1 });
db.c.insertMany([{ _id: 1, g: 'a', n: 1 }, { _id: 2, g: 'a', n: 3 }, { _id: 3, g: 'b', n: 2 }]);
const cur = db.c.find({ g: 'a' }).sort({ n: -1 });
print(cur.toArray().map(d => d._id).join(','));
print(db.c.find({ g: 'a' }).sort({ n: -1 }).explain().queryPlanner.winningPlan.stage);
