// An alternative correct design, written apart from the reference: the
// tree moves to `tree`, each comment's ancestors stored nearest first (the
// parent, then the grandparent …); the chain is sorted by depth on read,
// and the reply is an upsert.
db.categories.aggregate([
  {$graphLookup: {from: "categories", startWith: "$parent_id", connectFromField: "parent_id", connectToField: "_id", as: "up", depthField: "hops"}},
  {$project: {name: 1, parent_id: 1, depth: 1, ancestors: {$map: {input: {$sortArray: {input: "$up", sortBy: {hops: 1}}}, as: "u", in: "$$u._id"}}}},
  {$out: "tree"}
])
db.tree.createIndex({ancestors: 1, _id: 1})

// @op chain
const here = db.tree.findOne({_id: nodeId}, {ancestors: 1})
db.tree.aggregate([{$match: {_id: {$in: here.ancestors}}}, {$sort: {depth: 1}}, {$project: {_id: 1}}])

// @op reply
const up = db.tree.findOne({_id: nodeId}, {depth: 1, ancestors: 1})
db.tree.updateOne({_id: replyId}, [{$set: {name: "a reply", parent_id: nodeId, depth: up.depth + 1, ancestors: {$concatArrays: [[nodeId], up.ancestors]}}}], {upsert: true})

// @op descendants
db.tree.aggregate([{$match: {ancestors: nodeId}}, {$project: {_id: 1}}])
