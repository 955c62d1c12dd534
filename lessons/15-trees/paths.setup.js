// A materialised path: the ids from the root down to the node itself,
// comma-separated and comma-terminated, e.g. ",<root>,<child>,<node>,".
// Walk up from every node once ($graphLookup), order the ancestors from
// the root down, and store them with the depth.
db.categories.aggregate([
  {$graphLookup: {from: "categories", startWith: "$parent_id", connectFromField: "parent_id", connectToField: "_id", as: "anc", depthField: "d"}},
  {$unwind: {path: "$anc", preserveNullAndEmptyArrays: true}},
  {$sort: {_id: 1, "anc.d": -1}},
  {$group: {_id: "$_id", doc: {$first: "$$ROOT"}, ancestors: {$push: "$anc._id"}}},
  {$set: {ancestors: {$filter: {input: "$ancestors", cond: {$ne: ["$$this", null]}}}}},
  {$replaceWith: {$mergeObjects: ["$doc", {ancestors: "$ancestors", depth: {$size: "$ancestors"}}]}},
  {$unset: ["anc"]},
  {$out: "categories"}
])
db.categories.aggregate([
  {$set: {path: {$concat: [
    {$reduce: {input: "$ancestors", initialValue: ",", in: {$concat: ["$$value", {$toString: "$$this"}, ","]}}},
    {$toString: "$_id"}, ","
  ]}}},
  {$unset: ["ancestors"]},
  {$out: "categories"}
])
db.categories.createIndex({path: 1})
db.categories.createIndex({parent_id: 1})
