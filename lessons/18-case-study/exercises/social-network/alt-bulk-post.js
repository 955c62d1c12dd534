// An alternative correct design, written apart from the reference: each
// edge's _id is the pair itself (a double follow is a duplicate _id), a
// validated collection refuses self-follows, and the post is written with
// bulkWrite and counted with findOneAndUpdate.
db.createCollection("follow_edges", {validator: {$expr: {$ne: ["$_id.from", "$_id.to"]}}})
db.follows.aggregate([
  {$project: {_id: {from: "$follower_id", to: "$followee_id"}, since: "$created_at"}},
  {$merge: {into: "follow_edges", on: "_id", whenMatched: "keepExisting"}}
])
db.follow_edges.createIndex({"_id.from": 1})
db.follow_edges.createIndex({"_id.to": 1})
db.posts.createIndex({author_id: 1, created_at: -1, _id: -1})

// @op follow
db.follow_edges.insertOne({_id: {from: a, to: b}, since: new Date()})
db.users.bulkWrite([
  {updateOne: {filter: {_id: a}, update: {$inc: {following_count: 1}}}},
  {updateOne: {filter: {_id: b}, update: {$inc: {follower_count: 1}}}}
])

// @op unfollow
db.follow_edges.aggregate([
  {$match: {_id: {from: a, to: b}}},
  {$project: {_id: "$_id.to"}},
  {$merge: {into: "users", whenMatched: [{$set: {follower_count: {$add: ["$follower_count", -1]}}}], whenNotMatched: "discard"}}
])
db.follow_edges.aggregate([
  {$match: {_id: {from: a, to: b}}},
  {$project: {_id: "$_id.from"}},
  {$merge: {into: "users", whenMatched: [{$set: {following_count: {$add: ["$following_count", -1]}}}], whenNotMatched: "discard"}}
])
db.follow_edges.deleteOne({_id: {from: a, to: b}})

// @op post
db.posts.bulkWrite([{insertOne: {document: {_id: postId, author_id: a, title: "news", created_at: now, likes: 0}}}])
db.users.findOneAndUpdate({_id: a}, {$inc: {post_count: 1}})

// @op counts
db.users.find({_id: {$in: [userId, otherId, celebId]}}, {_id: 1, follower_count: 1, following_count: 1})

// @op feed
const mine = db.follow_edges.distinct("_id.to", {"_id.from": userId})
db.posts.find({author_id: {$in: mine}}, {_id: 1}).sort({created_at: -1, _id: -1}).limit(20)
