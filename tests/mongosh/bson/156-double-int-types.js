db = db.getSiblingDB('schemalab_corpus_156');
db.dropDatabase();
db.c.insertMany([{ _id: 1, v: 1 }, { _id: 2, v: 1.5 }, { _id: 3, v: NumberInt(1) }, { _id: 4, v: NumberLong('1') }]);
printjson(db.c.aggregate([{ $project: { t: { $type: '$v' } } }, { $sort: { _id: 1 } }]).toArray());
print(db.c.countDocuments({ v: 1 }));
