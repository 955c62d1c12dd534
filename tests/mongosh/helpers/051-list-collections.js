db = db.getSiblingDB('schemalab_corpus_051');
db.dropDatabase();
db.one.insertOne({});
db.two.insertOne({});
const names = db.getCollectionInfos().map(c => c.name + ':' + c.type).sort();
printjson(names);
printjson(db.getCollectionInfos({ name: 'two' }).map(c => c.name));
