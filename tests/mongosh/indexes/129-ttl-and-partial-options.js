db = db.getSiblingDB('schemalab_corpus_129');
db.dropDatabase();
db.c.createIndex({ at: 1 }, { expireAfterSeconds: 3600 });
db.c.createIndex({ s: 1 }, { partialFilterExpression: { s: { $exists: true } } });
const ix = db.c.getIndexes();
printjson(ix.filter(i => i.name === 'at_1').map(i => i.expireAfterSeconds));
printjson(ix.filter(i => i.name === 's_1').map(i => i.partialFilterExpression));
