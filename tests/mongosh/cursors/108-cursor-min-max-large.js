db = db.getSiblingDB('schemalab_corpus_108');
db.dropDatabase();
const docs = [];
for (let i = 0; i < 250; i++) docs.push({ _id: i, sq: i * i });
db.c.insertMany(docs);
print(db.c.find().itcount());
print(db.c.find().sort({ _id: -1 }).limit(1).next().sq);
print(db.c.find({ _id: { $gte: 100 } }).toArray().length);
