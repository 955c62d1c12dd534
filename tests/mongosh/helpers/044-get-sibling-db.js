db = db.getSiblingDB('schemalab_corpus_044');
db.dropDatabase();
const other = db.getSiblingDB('schemalab_corpus_044_other');
other.dropDatabase();
other.c.insertOne({ _id: 'x' });
print(other.getName());
print(db.getName());
print(other.c.countDocuments({}), db.c.countDocuments({}));
other.dropDatabase();
