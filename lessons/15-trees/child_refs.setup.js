// Each node lists its children. (parent_id stays only so the workload can
// pick nodes the same way in every variant; no query below uses it.)
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
db.categories.updateMany({}, {$unset: {ancestors: ""}})
db.categories.aggregate([
  {$match: {parent_id: {$ne: null}}},
  {$sort: {position: 1}},
  {$group: {_id: "$parent_id", children: {$push: "$_id"}}},
  {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.categories.updateMany({children: {$exists: false}}, {$set: {children: []}})
db.categories.createIndex({children: 1})
