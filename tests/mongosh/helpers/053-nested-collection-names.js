db = db.getSiblingDB('schemalab_corpus_053');
db.dropDatabase();
db.a.b.insertOne({ _id: 1 });
print(db.a.b.getName());
print(db.getCollection('a.b').countDocuments({}));
printjson(db.getCollectionNames());
