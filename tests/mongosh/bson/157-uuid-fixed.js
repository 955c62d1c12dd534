db = db.getSiblingDB('schemalab_corpus_157');
db.dropDatabase();
const u = UUID('0e6f63a3-7e0b-4a0e-9d1a-3a1b2c3d4e5f');
print(u);
printjson({ u });
print(u.toString('hex'));
db.c.insertOne({ _id: u });
printjson(db.c.findOne());
