// Each node lists its children. (parent_id stays only so the workload can
// pick nodes the same way in every variant; no query below uses it.)
db.categories.aggregate([
  {$match: {parent_id: {$ne: null}}},
  {$sort: {position: 1}},
  {$group: {_id: "$parent_id", children: {$push: "$_id"}}},
  {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.categories.updateMany({children: {$exists: false}}, {$set: {children: []}})
db.categories.createIndex({children: 1})
