db = db.getSiblingDB('schemalab_corpus_155');
db.dropDatabase();
const d = NumberDecimal('0.1');
print(d);
printjson({ d, e: Decimal128('1.50'), big: NumberDecimal('12345678901234567890.123') });
db.c.insertOne({ _id: 1, d });
print(db.c.countDocuments({ d: { $type: 'decimal' } }));
printjson(db.c.aggregate([{ $project: { _id: 0, s: { $add: ['$d', NumberDecimal('0.2')] } } }]).toArray());
