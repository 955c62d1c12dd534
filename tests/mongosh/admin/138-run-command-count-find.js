db = db.getSiblingDB('schemalab_corpus_138');
db.dropDatabase();
db.c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 2 }]);
printjson(db.runCommand({ count: 'c', query: { a: 2 } }));
const r = db.runCommand({ find: 'c', filter: {}, sort: { _id: -1 } });
printjson(r.cursor.firstBatch);
print(r.cursor.ns, r.ok);
