// The same {k, v} pairs, but the index is on the whole pair: queries must
// name a complete pair, {k, v} in that order, and can only test equality.
db.products.aggregate([
  {$set: {attrs: {$objectToArray: "$specs"}}},
  {$unset: ["specs"]},
  {$out: "products"}
])
db.products.createIndex({attrs: 1})
