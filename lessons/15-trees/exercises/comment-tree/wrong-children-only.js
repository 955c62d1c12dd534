// Mistake: "descendants" answered with the direct children (parent_id),
// right only for a comment whose replies have no replies.
db.categories.aggregate([
  {$graphLookup: {from: "categories", startWith: "$parent_id", connectFromField: "parent_id", connectToField: "_id", as: "up", depthField: "d"}},
  {$set: {ancestors: {$map: {input: {$sortArray: {input: "$up", sortBy: {d: -1}}}, as: "a", in: "$$a._id"}}}},
  {$unset: "up"},
  {$out: "comments"}
])
db.comments.createIndex({parent_id: 1})

// @op chain
const node = db.comments.findOne({_id: nodeId})
db.comments.find({_id: {$in: node.ancestors}}).sort({depth: 1})

// @op reply
const parent = db.comments.findOne({_id: nodeId})
db.comments.insertOne({_id: replyId, parent_id: nodeId, depth: parent.depth + 1, ancestors: parent.ancestors, name: "a reply"})
db.comments.updateOne({_id: replyId}, {$push: {ancestors: nodeId}})

// @op descendants
db.comments.find({parent_id: nodeId}, {_id: 1})
