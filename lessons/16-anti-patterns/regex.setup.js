// An ordinary (binary) index on name, and one person we know.
db.people.insertOne({name: "Ada Lovelace", email: "ada@example.org", nationality: "United Kingdom"})
db.people.createIndex({name: 1})
db.addresses.drop()
db.phones.drop()
db.passports.drop()
