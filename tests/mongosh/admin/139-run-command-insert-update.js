db = db.getSiblingDB('schemalab_corpus_139');
db.dropDatabase();
printjson(db.runCommand({ insert: 'c', documents: [{ _id: 1 }, { _id: 2 }] }));
printjson(db.runCommand({ update: 'c', updates: [{ q: { _id: 1 }, u: { $set: { x: 1 } } }] }));
printjson(db.runCommand({ delete: 'c', deletes: [{ q: { _id: 2 }, limit: 1 }] }));
printjson(db.c.find().toArray());
