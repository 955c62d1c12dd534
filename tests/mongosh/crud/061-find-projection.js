db = db.getSiblingDB('schemalab_corpus_061');
db.dropDatabase();
db.c.insertOne({ _id: 1, a: 1, b: { c: 2, d: 3 }, e: [1, 2, 3] });
printjson(db.c.findOne({}, { a: 1 }));
printjson(db.c.findOne({}, { _id: 0, 'b.c': 1 }));
printjson(db.c.findOne({}, { b: 0, e: 0 }));
printjson(db.c.findOne({}, { e: { $slice: 2 }, _id: 0, a: 1 }));
