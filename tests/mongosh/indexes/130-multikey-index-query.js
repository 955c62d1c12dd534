db = db.getSiblingDB('schemalab_corpus_130');
db.dropDatabase();
db.c.createIndex({ tags: 1 });
db.c.insertMany([{ _id: 1, tags: ['a', 'b'] }, { _id: 2, tags: ['b', 'c'] }, { _id: 3, tags: [] }]);
printjson(db.c.find({ tags: 'b' }).sort({ _id: 1 }).toArray().map(d => d._id));
print(db.c.find({ tags: 'c' }).explain().queryPlanner.winningPlan.inputStage.stage);
