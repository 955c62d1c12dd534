db = db.getSiblingDB('schemalab_corpus_159');
db.dropDatabase();
const t = Timestamp({ t: 1700000000, i: 3 });
print(t);
printjson({ t });
print(t.getHighBits(), t.getLowBits());
db.c.insertOne({ _id: 1, t });
printjson(db.c.findOne());
