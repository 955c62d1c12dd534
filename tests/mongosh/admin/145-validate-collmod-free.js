db = db.getSiblingDB('schemalab_corpus_145');
db.dropDatabase();
db.createCollection('v', { validator: { $jsonSchema: { required: ['name'] } } });
db.v.insertOne({ _id: 1, name: 'ok' });
try { db.v.insertOne({ _id: 2 }); } catch (e) { print(e.name, e.code); }
print(db.v.countDocuments({}));
