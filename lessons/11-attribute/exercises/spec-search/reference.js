// specs {colour: "red", size: "M"} becomes attrs [{k: "colour", v: "red"}, {k: "size", v: "M"}].
db.products.updateMany({}, [{$set: {attrs: {$objectToArray: "$specs"}}}, {$unset: "specs"}])
db.products.createIndex({"attrs.k": 1, "attrs.v": 1})

// @op by_colour
db.products.find({attrs: {$elemMatch: {k: "colour", v: colour}}})

// @op by_ram
db.products.find({attrs: {$elemMatch: {k: "ram_gb", v: {$gte: ramMin}}}})

// @op by_language
db.products.find({attrs: {$elemMatch: {k: "language", v: language}}})
