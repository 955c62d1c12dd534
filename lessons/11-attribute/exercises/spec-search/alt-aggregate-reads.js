// An alternative correct design, written apart from the reference: the
// pairs keep the original specs beside them for display, and the reads are
// aggregations whose first stage matches the pair.
db.products.updateMany({}, [{$set: {attributes: {$objectToArray: "$specs"}}}])
db.products.createIndex({"attributes.k": 1, "attributes.v": 1})

// @op by_colour
db.products.aggregate([{$match: {attributes: {$elemMatch: {k: "colour", v: colour}}}}, {$project: {_id: 0, sku: 1}}])

// @op by_ram
db.products.aggregate([{$match: {attributes: {$elemMatch: {k: "ram_gb", v: {$gte: ramMin}}}}}, {$project: {_id: 0, sku: 1}}])

// @op by_language
db.products.aggregate([{$match: {attributes: {$elemMatch: {k: "language", v: language}}}}, {$project: {_id: 0, sku: 1}}])
