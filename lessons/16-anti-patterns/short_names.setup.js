// The same values under one-letter names; the application maps them back.
db.people.aggregate([
  {$project: {n: "$name", e: "$email", b: "$born", c: "$nationality", x: "$notes"}},
  {$out: "people"}
])
db.addresses.drop()
db.phones.drop()
db.passports.drop()
