db = db.getSiblingDB('schemalab_corpus_141');
db.dropDatabase();
try {
  db.runCommand({ noSuchCommandEver: 1 });
  print('no throw');
} catch (e) {
  print(e.name, e.code, e.codeName);
}
