db = db.getSiblingDB('schemalab_corpus_102');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

const e = db.c.find({ n: { $gte: 20 } }).explain('executionStats');
print(e.executionStats.nReturned, e.executionStats.totalDocsExamined);
print(typeof e.executionStats.executionTimeMillis);
