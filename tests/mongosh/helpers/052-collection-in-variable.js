db = db.getSiblingDB('schemalab_corpus_052');
db.dropDatabase();
const coll = db.items;
coll.insertMany([{ _id: 1 }, { _id: 2 }]);
const name = 'items';
print(db[name].countDocuments({}), coll.countDocuments({ _id: 2 }));
print(coll === db.items ? 'same' : 'different object');
