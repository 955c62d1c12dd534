db = db.getSiblingDB('schemalab_corpus_107');
db.dropDatabase();
db.c.insertMany([{ _id: 1, w: 'b' }, { _id: 2, w: 'B' }, { _id: 3, w: 'a' }]);
print(db.c.find().sort({ w: 1 }).toArray().map(d => d.w).join(''));
print(db.c.find({ w: 'b' }).collation({ locale: 'en', strength: 2 }).count());
