db = db.getSiblingDB('schemalab_corpus_140');
db.dropDatabase();
db.x.insertOne({});
db.y.insertOne({});
const r = db.runCommand({ listCollections: 1, nameOnly: true });
printjson(r.cursor.firstBatch.map(c => c.name).sort());
