db = db.getSiblingDB('schemalab_corpus_088');
db.dropDatabase();
db.c.insertMany([{ _id: 1, n: 30, s: 'c' }, { _id: 2, n: 10, s: 'a' }, { _id: 3, n: 20, s: 'b' }, { _id: 4, n: 40, s: 'd' }]);

const arr = db.c.find({}, { n: 1 }).toArray();
print(Array.isArray(arr), arr.length);
printjson(arr[0]);
