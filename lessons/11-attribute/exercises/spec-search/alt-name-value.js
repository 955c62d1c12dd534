// An alternative correct design, written apart from the reference: `specs`
// itself becomes the array of pairs, named {name, value}, and each read
// matches a name and its value inside the same element.
db.products.updateMany({}, [{$set: {specs: {$map: {input: {$objectToArray: "$specs"}, as: "p", in: {name: "$$p.k", value: "$$p.v"}}}}}])
db.products.createIndex({"specs.name": 1, "specs.value": 1}, {name: "spec_pairs"})

// @op by_colour
db.products.find({specs: {$elemMatch: {name: "colour", value: colour}}}, {sku: 1, name: 1})

// @op by_ram
db.products.find({specs: {$elemMatch: {name: "ram_gb", value: {$gte: ramMin}}}}, {sku: 1, name: 1})

// @op by_language
db.products.find({specs: {$elemMatch: {value: language, name: "language"}}}, {sku: 1, name: 1})
