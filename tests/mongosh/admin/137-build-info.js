db = db.getSiblingDB('schemalab_corpus_137');
db.dropDatabase();
const bi = db.runCommand({ buildInfo: 1 });
print(bi.ok, typeof bi.version, Array.isArray(bi.versionArray), bi.versionArray.length);
print(bi.version.split('.').length >= 2);
