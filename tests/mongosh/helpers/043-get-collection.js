db = db.getSiblingDB('schemalab_corpus_043');
db.dropDatabase();
db.getCollection('odd-name').insertOne({ _id: 1 });
db.getCollection('with space').insertOne({ _id: 2 });
print(db.getCollection('odd-name').countDocuments({}));
print(db.getCollection('with space').findOne()._id);
print(db['odd-name'].getName());
