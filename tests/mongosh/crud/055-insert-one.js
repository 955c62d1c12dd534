db = db.getSiblingDB('schemalab_corpus_055');
db.dropDatabase();
const r = db.c.insertOne({ _id: 1, name: 'a' });
print(r.acknowledged, r.insertedId);
printjson(r);
printjson(db.c.find().toArray());
