db = db.getSiblingDB('schemalab_corpus_132');
db.dropDatabase();
db.src.insertOne({ _id: 1 });
db.dst.insertOne({ _id: 'old' });
try { db.src.renameCollection('dst'); } catch (e) { print(e.name, e.codeName); }
db.src.renameCollection('dst', true);
printjson(db.dst.find().toArray());
