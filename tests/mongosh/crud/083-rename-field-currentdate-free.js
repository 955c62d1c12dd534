db = db.getSiblingDB('schemalab_corpus_083');
db.dropDatabase();
db.c.insertOne({ _id: 1, old: 'v', keep: 1 });
db.c.updateOne({ _id: 1 }, { $rename: { old: 'neu' } });
printjson(db.c.findOne());
