db = db.getSiblingDB('schemalab_corpus_050');
db.dropDatabase();
db.x.insertOne({ _id: 1 });
const r = db.dropDatabase();
print(r.ok, r.dropped);
print(db.getCollectionNames().length);
