// An alternative correct design, written apart from the reference: one
// document per follow whose _id is the pair {from, to} (a double follow
// cannot exist), an index on the follower side, and the answer reshaped by
// an aggregation.
db.follows.aggregate([
  {$project: {_id: {from: "$follower_id", to: "$followee_id"}, created_at: 1}},
  {$out: "edges"}
])
db.follows.drop()
db.edges.createIndex({"_id.from": 1})
db.edges.createIndex({"_id.to": 1})

// @op follow
db.edges.insertOne({_id: {from: fan, to: celebId}, created_at: new Date()})

// @op following
db.edges.aggregate([{$match: {"_id.from": userId}}, {$project: {_id: 0, followee_id: "$_id.to"}}])
