// Mistake: the follow edges are right and indexed, but the posts are not
// indexed by author: every feed read scans all posts.
db.createCollection("edges", {validator: {$expr: {$ne: ["$follower_id", "$followee_id"]}}})
db.follows.aggregate([{$merge: {into: "edges"}}])
db.follows.drop()
db.edges.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.edges.createIndex({followee_id: 1})

// @op follow
db.edges.insertOne({follower_id: a, followee_id: b, created_at: new Date()})
db.users.updateOne({_id: b}, {$inc: {follower_count: 1}})
db.users.updateOne({_id: a}, {$inc: {following_count: 1}})

// @op unfollow
db.edges.aggregate([
  {$match: {follower_id: a, followee_id: b}},
  {$project: {_id: "$followee_id"}},
  {$merge: {into: "users", on: "_id", whenMatched: [{$set: {follower_count: {$subtract: ["$follower_count", 1]}}}], whenNotMatched: "discard"}}
])
db.edges.aggregate([
  {$match: {follower_id: a, followee_id: b}},
  {$project: {_id: "$follower_id"}},
  {$merge: {into: "users", on: "_id", whenMatched: [{$set: {following_count: {$subtract: ["$following_count", 1]}}}], whenNotMatched: "discard"}}
])
db.edges.deleteOne({follower_id: a, followee_id: b})

// @op post
db.posts.insertOne({_id: postId, author_id: a, title: "news", created_at: now, likes: 0})
db.users.updateOne({_id: a}, {$inc: {post_count: 1}})

// @op counts
db.users.find({_id: {$in: [userId, otherId, celebId]}}, {follower_count: 1, following_count: 1})

// @op feed
const followed = db.edges.distinct("followee_id", {follower_id: userId})
db.posts.find({author_id: {$in: followed}}).sort({created_at: -1, _id: -1}).limit(20)
