// parent_id plus the full list of ancestors, root first, in a multikey index.
// Built from the roots down, one level at a time: a node's ancestors are its
// parent's ancestors followed by the parent itself, and the parent, one level
// up, got its list in the pass before. One pass per level, each a $lookup of
// the parents by _id and a $merge of the new lists back into the collection.
db.categories.updateMany({parent_id: null}, {$set: {ancestors: []}})
const levels = db.categories.aggregate([
  {$match: {parent_id: {$ne: null}}},
  {$group: {_id: "$depth"}},
  {$sort: {_id: 1}}
]).toArray()
for (const level of levels) {
  db.categories.aggregate([
    {$match: {depth: level._id}},
    {$lookup: {from: "categories", localField: "parent_id", foreignField: "_id", as: "parent"}},
    {$project: {ancestors: {$concatArrays: [{$first: "$parent.ancestors"}, ["$parent_id"]]}}},
    {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
  ])
}
// Ancestor id, then name: "everything under X, by name" reads the index in
// order (an equality on one ancestor id, then the sort).
db.categories.createIndex({ancestors: 1, name: 1, _id: 1}, {name: "ancestors_name"})
db.categories.createIndex({parent_id: 1})
