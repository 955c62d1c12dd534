db = db.getSiblingDB('schemalab_corpus_144');
db.dropDatabase();
db.c.insertOne({ _id: 1 });
const r = db.adminCommand({ listDatabases: 1, nameOnly: true });
print(r.ok, r.databases.some(d => d.name === db.getName()));
