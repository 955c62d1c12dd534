db = db.getSiblingDB('schemalab_corpus_049');
db.dropDatabase();
db.gone.insertOne({ _id: 1 });
print(db.gone.drop());
print(db.getCollectionNames().includes('gone'));
print(db.gone.drop());
