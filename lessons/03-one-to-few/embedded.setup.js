// Fold addresses into their person; phones and passports are not part of
// this lesson, so they are dropped.
db.addresses.aggregate([
  {$group: {_id: "$person_id", addresses: {$push: {kind: "$kind", street: "$street", city: "$city", postcode: "$postcode", country: "$country"}}}},
  {$merge: {into: "people", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.addresses.drop()
db.phones.drop()
db.passports.drop()
// A multikey index: one key per address, pointing at its person.
db.people.createIndex({"addresses.city": 1})
