db = db.getSiblingDB('schemalab_corpus_068');
db.dropDatabase();
db.c.insertOne({ _id: 1, n: 1, arr: [1, 2], tmp: 'x', lo: 5, hi: 5, m: 3 });
db.c.updateOne({ _id: 1 }, {
  $inc: { n: 2 }, $push: { arr: 3 }, $unset: { tmp: '' },
  $min: { lo: 1 }, $max: { hi: 9 }, $mul: { m: 2 }
});
printjson(db.c.findOne());
