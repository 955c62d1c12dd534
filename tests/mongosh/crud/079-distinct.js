db = db.getSiblingDB('schemalab_corpus_079');
db.dropDatabase();
db.c.insertMany([
  { _id: 1, c: 'b', tags: ['x', 'y'] },
  { _id: 2, c: 'a', tags: ['y'] },
  { _id: 3, c: 'b' },
]);
printjson(db.c.distinct('c').sort());
printjson(db.c.distinct('tags').sort());
printjson(db.c.distinct('c', { _id: { $gt: 1 } }).sort());
