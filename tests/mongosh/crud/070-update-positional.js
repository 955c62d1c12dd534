db = db.getSiblingDB('schemalab_corpus_070');
db.dropDatabase();
db.c.insertOne({ _id: 1, grades: [{ s: 'm', v: 1 }, { s: 'e', v: 2 }] });
db.c.updateOne({ _id: 1, 'grades.s': 'e' }, { $set: { 'grades.$.v': 20 } });
db.c.updateOne({ _id: 1 }, { $inc: { 'grades.$[].v': 1 } });
db.c.updateOne({ _id: 1 }, { $set: { 'grades.$[g].ok': true } }, { arrayFilters: [{ 'g.v': { $gt: 10 } }] });
printjson(db.c.findOne().grades);
