db = db.getSiblingDB('schemalab_corpus_121');
db.dropDatabase();
printjson(db.c.createIndexes([{ x: 1 }, { y: 1 }]));
print(db.c.getIndexes().length);
