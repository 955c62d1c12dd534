db = db.getSiblingDB('schemalab_corpus_150');
db.dropDatabase();
db.c.insertOne({ _id: ObjectId('000000000000000000000001'), ref: ObjectId('00000000000000000000000a') });
printjson(db.c.findOne());
print(db.c.findOne({ ref: ObjectId('00000000000000000000000a') })._id.toHexString());
