// An alternative correct design, written apart from the reference: the
// comments stay in `categories` (enriched in place with $merge), and the
// reply is built and written by one aggregate + $merge, which reports no
// write counts: the checker judges it by its effect on the data.
db.categories.aggregate([
  {$graphLookup: {from: "categories", startWith: "$parent_id", connectFromField: "parent_id", connectToField: "_id", as: "up", depthField: "d"}},
  {$project: {ancestors: {$map: {input: {$sortArray: {input: "$up", sortBy: {d: -1}}}, as: "u", in: "$$u._id"}}}},
  {$merge: {into: "categories", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.categories.createIndex({ancestors: 1})

// @op chain
const me = db.categories.findOne({_id: nodeId}, {ancestors: 1})
db.categories.find({_id: {$in: me.ancestors}}, {_id: 1, depth: 1}).sort({depth: 1})

// @op reply
db.categories.aggregate([
  {$match: {_id: nodeId}},
  {$replaceWith: {_id: {$literal: replyId}, name: "a reply", parent_id: "$_id", depth: {$add: ["$depth", 1]}, ancestors: {$concatArrays: ["$ancestors", ["$_id"]]}}},
  {$merge: {into: "categories", on: "_id", whenMatched: "fail", whenNotMatched: "insert"}}
])

// @op descendants
db.categories.find({ancestors: nodeId}, {_id: 1})
