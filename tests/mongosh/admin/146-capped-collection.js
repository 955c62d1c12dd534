db = db.getSiblingDB('schemalab_corpus_146');
db.dropDatabase();
db.createCollection('log', { capped: true, size: 4096, max: 3 });
for (let i = 1; i <= 5; i++) db.log.insertOne({ _id: i });
print(db.log.find().toArray().map(d => d._id).join(','));
print(db.log.isCapped());
