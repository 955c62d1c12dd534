// Mistake: the index holds the keys only, so a RAM range walks every
// product that has a ram_gb and filters the values afterwards.
db.products.updateMany({}, [{$set: {attrs: {$objectToArray: "$specs"}}}, {$unset: "specs"}])
db.products.createIndex({"attrs.k": 1})

// @op by_colour
db.products.find({attrs: {$elemMatch: {k: "colour", v: colour}}})

// @op by_ram
db.products.find({attrs: {$elemMatch: {k: "ram_gb", v: {$gte: ramMin}}}})

// @op by_language
db.products.find({attrs: {$elemMatch: {k: "language", v: language}}})
