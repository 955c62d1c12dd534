db = db.getSiblingDB('schemalab_corpus_143');
db.dropDatabase();
db.setProfilingLevel(2);
db.c.insertOne({ _id: 1 });
db.c.find({ _id: 1 }).toArray();
db.setProfilingLevel(0);
const ops = db.system.profile.find({ ns: db.getName() + '.c' }).toArray().map(p => p.op);
print(ops.includes('insert'), ops.includes('query'));
