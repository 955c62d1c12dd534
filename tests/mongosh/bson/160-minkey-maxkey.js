db = db.getSiblingDB('schemalab_corpus_160');
db.dropDatabase();
db.c.insertMany([{ _id: 1, v: MaxKey() }, { _id: 2, v: 5 }, { _id: 3, v: MinKey() }, { _id: 4, v: 'z' }]);
print(db.c.find().sort({ v: 1 }).toArray().map(d => d._id).join(','));
printjson(db.c.findOne({ _id: 1 }));
printjson({ lo: MinKey(), hi: MaxKey() });
