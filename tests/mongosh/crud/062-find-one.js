db = db.getSiblingDB('schemalab_corpus_062');
db.dropDatabase();
db.c.insertMany([{ _id: 1, k: 'x' }, { _id: 2, k: 'y' }]);
printjson(db.c.findOne({ k: 'y' }));
print(db.c.findOne({ k: 'z' }));
printjson(db.c.findOne({ _id: 1 }, { _id: 0 }));
