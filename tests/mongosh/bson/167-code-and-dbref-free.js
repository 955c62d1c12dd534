db = db.getSiblingDB('schemalab_corpus_167');
db.dropDatabase();
const dec = NumberDecimal('-0.00');
print(dec);
printjson({ inf: Infinity, nan: NaN, negz: -0 });
db.c.insertOne({ _id: 1, inf: Infinity, nan: NaN });
printjson(db.c.findOne());
