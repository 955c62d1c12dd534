// Each node lists its children. (parent_id stays only so the workload can
// pick nodes the same way in every variant; no query below uses it.)
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
db.categories.aggregate([
  {$match: {parent_id: {$ne: null}}},
  {$sort: {position: 1}},
  {$group: {_id: "$parent_id", children: {$push: "$_id"}}},
  {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.categories.updateMany({children: {$exists: false}}, {$set: {children: []}})
db.categories.createIndex({children: 1})
