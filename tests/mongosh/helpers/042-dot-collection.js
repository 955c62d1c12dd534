db = db.getSiblingDB('schemalab_corpus_042');
db.dropDatabase();
db.people.insertOne({ _id: 1, name: 'Ada' });
print(db.people.getName());
print(db.people.getFullName());
printjson(db.people.findOne());
