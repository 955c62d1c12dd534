// Turn the `specs` sub-document into an array of {k, v} pairs, then index
// the pair once: every spec, present or future, shares this index.
db.products.aggregate([
  {$set: {attrs: {$objectToArray: "$specs"}}},
  {$unset: ["specs"]},
  {$out: "products"}
])
db.products.createIndex({"attrs.k": 1, "attrs.v": 1})
