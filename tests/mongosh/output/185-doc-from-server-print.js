db = db.getSiblingDB('schemalab_corpus_185');
db.dropDatabase();
db.c.insertOne({ _id: 1, s: 'x', arr: [1, { y: 2 }], sub: { z: null } });
print(db.c.findOne());
printjson(db.c.findOne());
console.log(db.c.findOne());
print(db.c.find().toArray());
