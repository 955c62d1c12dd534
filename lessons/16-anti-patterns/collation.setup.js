// The same index built with a collation that ignores case (strength 2).
db.people.insertOne({name: "Ada Lovelace", email: "ada@example.org", nationality: "United Kingdom"})
db.people.createIndex({name: 1}, {collation: {locale: "en", strength: 2}})
db.addresses.drop()
db.phones.drop()
db.passports.drop()
