// Mistake: the pairs are right, but the key and the value get an index
// each instead of one compound index: two indexes to maintain, and a range
// on the value cannot be bounded by its key.
db.products.updateMany({}, [{$set: {attrs: {$objectToArray: "$specs"}}}, {$unset: "specs"}])
db.products.createIndex({"attrs.k": 1})
db.products.createIndex({"attrs.v": 1})

// @op by_colour
db.products.find({attrs: {$elemMatch: {k: "colour", v: colour}}})

// @op by_ram
db.products.find({attrs: {$elemMatch: {k: "ram_gb", v: {$gte: ramMin}}}})

// @op by_language
db.products.find({attrs: {$elemMatch: {k: "language", v: language}}})
