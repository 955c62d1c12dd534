// Fold each child collection into its person, then drop the child tables.
// $group + $merge is linear in the data, unlike a $lookup per person.
db.addresses.aggregate([
  {$group: {_id: "$person_id", addresses: {$push: {kind: "$kind", street: "$street", city: "$city", postcode: "$postcode", country: "$country"}}}},
  {$merge: {into: "people", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.phones.aggregate([
  {$group: {_id: "$person_id", phones: {$push: {kind: "$kind", number: "$number", primary: "$primary"}}}},
  {$merge: {into: "people", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.passports.aggregate([
  {$project: {_id: "$person_id", passport: {number: "$number", country: "$country", issued: "$issued", expires: "$expires"}}},
  {$merge: {into: "people", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.addresses.drop()
db.phones.drop()
db.passports.drop()
