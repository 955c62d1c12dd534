db = db.getSiblingDB('schemalab_corpus_154');
db.dropDatabase();
const n = NumberLong('9007199254740993');
print(n);
printjson({ n });
printjson({ small: NumberLong('5') });
db.c.insertOne({ _id: 1, n });
printjson(db.c.findOne());
print(db.c.countDocuments({ n: { $type: 'long' } }));
