db = db.getSiblingDB('schemalab_corpus_205');
db.dropDatabase();
print('before');
db.c.find({ $foo: 1 }).toArray();
print('not reached');
