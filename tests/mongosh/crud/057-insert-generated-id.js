db = db.getSiblingDB('schemalab_corpus_057');
db.dropDatabase();
const r = db.c.insertOne({ name: 'gen' });
const id = r.insertedId;
print(id instanceof ObjectId, typeof id.toHexString(), id.toHexString().length);
print(db.c.findOne({ _id: id }).name);
