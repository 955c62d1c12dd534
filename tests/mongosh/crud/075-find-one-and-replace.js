db = db.getSiblingDB('schemalab_corpus_075');
db.dropDatabase();
db.c.insertOne({ _id: 1, v: 'old' });
printjson(db.c.findOneAndReplace({ _id: 1 }, { v: 'new' }));
printjson(db.c.findOneAndReplace({ _id: 1 }, { v: 'newer' }, { returnDocument: 'after', projection: { _id: 0 } }));
