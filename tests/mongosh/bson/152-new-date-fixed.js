db = db.getSiblingDB('schemalab_corpus_152');
db.dropDatabase();
const d = new Date(1700000000000);
print(d.toISOString());
printjson(d);
printjson({ when: d });
db.c.insertOne({ _id: 1, d });
printjson(db.c.findOne());
print(db.c.countDocuments({ d: { $gt: new Date('2023-01-01') } }));
