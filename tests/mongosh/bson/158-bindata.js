db = db.getSiblingDB('schemalab_corpus_158');
db.dropDatabase();
const b = BinData(0, 'SGVsbG8=');
print(b);
printjson({ b });
print(b.sub_type, b.toString('base64'));
db.c.insertOne({ _id: 1, b });
printjson(db.c.findOne().b);
