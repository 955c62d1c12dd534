db = db.getSiblingDB('schemalab_corpus_118');
db.dropDatabase();
db.c.insertOne({ _id: 1, s: 'Hello', n: 7, d: ISODate('2024-03-15T10:20:30Z'), a: [3, 1, 2] });
printjson(db.c.aggregate([{ $project: {
  _id: 0,
  up: { $toUpper: '$s' }, len: { $strLenCP: '$s' }, cat: { $concat: ['$s', '!'] },
  mod: { $mod: ['$n', 3] }, cond: { $cond: [{ $gt: ['$n', 5] }, 'big', 'small'] },
  y: { $year: '$d' }, m: { $month: '$d' }, size: { $size: '$a' }, sum: { $sum: '$a' },
  str: { $dateToString: { format: '%Y-%m-%d', date: '$d' } },
} }]).toArray());
