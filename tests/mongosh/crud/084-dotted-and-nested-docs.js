db = db.getSiblingDB('schemalab_corpus_084');
db.dropDatabase();
db.c.insertOne({ _id: 1, profile: { address: { city: 'Oslo', zip: '0150' } } });
print(db.c.findOne({ 'profile.address.city': 'Oslo' }).profile.address.zip);
print(db.c.countDocuments({ profile: { address: { city: 'Oslo', zip: '0150' } } }));
print(db.c.countDocuments({ profile: { address: { zip: '0150', city: 'Oslo' } } }));
