db = db.getSiblingDB('schemalab_corpus_153');
db.dropDatabase();
const n = NumberInt(42);
print(n);
printjson(n);
printjson({ n, s: NumberInt('7') });
db.c.insertOne({ _id: 1, n });
print(db.c.findOne({ n: { $type: 'int' } })._id);
