// Mistake: the pairs and the index are right, but the reads name the key
// and the value separately, not in one $elemMatch: the value may belong to
// another pair, and the index bounds on key and value cannot combine.
db.products.updateMany({}, [{$set: {attrs: {$objectToArray: "$specs"}}}, {$unset: "specs"}])
db.products.createIndex({"attrs.k": 1, "attrs.v": 1})

// @op by_colour
db.products.find({"attrs.k": "colour", "attrs.v": colour})

// @op by_ram
db.products.find({"attrs.k": "ram_gb", "attrs.v": {$gte: ramMin}})

// @op by_language
db.products.find({"attrs.k": "language", "attrs.v": language})
