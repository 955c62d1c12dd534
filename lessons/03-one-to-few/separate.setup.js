// Addresses stay in their own collection, indexed the way the queries use them.
db.addresses.createIndex({person_id: 1})
db.addresses.createIndex({city: 1})
db.phones.drop()
db.passports.drop()
