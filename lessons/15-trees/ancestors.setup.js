// parent_id plus the full list of ancestors, root first, in a multikey index.
// Compute every node's ancestors (root first) without a recursive walk, by
// pointer doubling: each node starts with [parent_id]; each pass prepends the
// list of the furthest ancestor it knows, so the known chain doubles and four
// passes cover trees up to 16 levels deep. Each pass is one linear
// $unionWith + $group that rewrites the collection with $out.
db.categories.aggregate([
  {$set: {ancestors: {$cond: [{$eq: [{$ifNull: ["$parent_id", null]}, null]}, [], ["$parent_id"]]}}},
  {$out: "categories"}
])
for (const pass of [1, 2, 3, 4]) {
  db.categories.aggregate([
    {$match: {"ancestors.0": {$exists: true}}},
    {$project: {_id: 0, key: {$first: "$ancestors"}, child: "$$ROOT"}},
    {$unionWith: {coll: "categories", pipeline: [{$project: {_id: 0, key: "$_id", anc: "$ancestors"}}]}},
    {$group: {_id: "$key", anc: {$max: "$anc"}, children: {$push: "$child"}}},
    {$unwind: "$children"},
    {$replaceWith: {$mergeObjects: ["$children", {ancestors: {$concatArrays: ["$anc", "$children.ancestors"]}}]}},
    {$unionWith: {coll: "categories", pipeline: [{$match: {"ancestors.0": {$exists: false}}}]}},
    {$out: "categories"}
  ])
}
db.categories.createIndex({ancestors: 1})
db.categories.createIndex({parent_id: 1})
