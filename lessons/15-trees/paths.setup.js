// A materialised path: the ids from the root down to the node itself,
// comma-separated and comma-terminated, e.g. ",<root>,<child>,<node>,".
// Built from the roots down, one level at a time: a node's path is its
// parent's path followed by its own id, and the parent, one level up, got
// its path in the pass before.
db.categories.updateMany({parent_id: null}, [{$set: {path: {$concat: [",", {$toString: "$_id"}, ","]}}}])
const levels = db.categories.aggregate([
  {$match: {parent_id: {$ne: null}}},
  {$group: {_id: "$depth"}},
  {$sort: {_id: 1}}
]).toArray()
for (const level of levels) {
  db.categories.aggregate([
    {$match: {depth: level._id}},
    {$lookup: {from: "categories", localField: "parent_id", foreignField: "_id", as: "parent"}},
    {$project: {path: {$concat: [{$first: "$parent.path"}, {$toString: "$_id"}, ","]}}},
    {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
  ])
}
db.categories.createIndex({path: 1})
db.categories.createIndex({parent_id: 1})
