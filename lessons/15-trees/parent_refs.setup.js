// Parent references as generated, indexed for "children of X".
// depth is computed once so the workload can pick the deepest node; the
// ancestors list used to compute it is then removed.
// Compute every node's ancestors (root first) without a recursive walk: each
// pass gives every child its parent's list plus the parent itself, so after
// as many passes as the tree is deep every list is complete. Each pass is one
// linear $unionWith + $group over the collection.
db.categories.updateMany({}, {$set: {ancestors: []}})
for (const pass of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]) {
  db.categories.aggregate([
    {$match: {parent_id: {$ne: null}}},
    {$project: {_id: 0, key: "$parent_id", child: "$_id"}},
    {$unionWith: {coll: "categories", pipeline: [{$project: {_id: 0, key: "$_id", anc: "$ancestors"}}]}},
    {$group: {_id: "$key", anc: {$max: "$anc"}, children: {$push: "$child"}}},
    {$unwind: "$children"},
    {$project: {_id: "$children", ancestors: {$concatArrays: ["$anc", ["$_id"]]}}},
    {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
  ])
}
db.categories.aggregate([{$set: {depth: {$size: "$ancestors"}}}, {$out: "categories"}])
db.categories.updateMany({}, {$unset: {ancestors: ""}})
db.categories.createIndex({parent_id: 1})
