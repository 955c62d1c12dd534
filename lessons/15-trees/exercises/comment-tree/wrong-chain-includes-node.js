// Mistake: the chain counts the comment itself among its ancestors (an
// off-by-one at the bottom of the chain).
db.categories.aggregate([
  {$graphLookup: {from: "categories", startWith: "$parent_id", connectFromField: "parent_id", connectToField: "_id", as: "up", depthField: "d"}},
  {$set: {ancestors: {$map: {input: {$sortArray: {input: "$up", sortBy: {d: -1}}}, as: "a", in: "$$a._id"}}}},
  {$unset: "up"},
  {$out: "comments"}
])
db.comments.createIndex({ancestors: 1})

// @op chain
const node = db.comments.findOne({_id: nodeId})
db.comments.find({$or: [{_id: {$in: node.ancestors}}, {_id: nodeId}]}).sort({depth: 1})

// @op reply
const parent = db.comments.findOne({_id: nodeId})
db.comments.insertOne({_id: replyId, parent_id: nodeId, depth: parent.depth + 1, ancestors: parent.ancestors, name: "a reply"})
db.comments.updateOne({_id: replyId}, {$push: {ancestors: nodeId}})

// @op descendants
db.comments.find({ancestors: nodeId}, {_id: 1})
