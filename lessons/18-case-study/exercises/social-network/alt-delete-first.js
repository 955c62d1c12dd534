// An alternative correct design, written apart from the reference: follows
// move to `links` (a validator refuses a self-follow, a unique index on the
// pair a double follow); both counts move in one pipeline updateMany; an
// unfollow deletes the edge first and moves the counts only through the
// edge it removed (when there was none, reading its fields fails and stops
// the section).
db.createCollection("links", {validator: {$expr: {$ne: ["$follower_id", "$followee_id"]}}})
db.links.createIndex({followee_id: 1, follower_id: 1}, {unique: true})
db.links.createIndex({follower_id: 1})
db.follows.aggregate([{$project: {_id: 0, follower_id: 1, followee_id: 1, created_at: 1}}, {$merge: {into: "links", whenMatched: "fail"}}])
db.follows.drop()
db.posts.createIndex({author_id: 1, created_at: 1, _id: 1})

// @op follow
db.links.insertOne({follower_id: a, followee_id: b, created_at: new Date()})
db.users.updateMany({_id: {$in: [a, b]}}, [{$set: {
  follower_count: {$add: [{$ifNull: ["$follower_count", 0]}, {$cond: [{$eq: ["$_id", b]}, 1, 0]}]},
  following_count: {$add: [{$ifNull: ["$following_count", 0]}, {$cond: [{$eq: ["$_id", a]}, 1, 0]}]}
}}])

// @op unfollow
const gone = db.links.findOneAndDelete({follower_id: a, followee_id: b})
const from = gone.follower_id
const to = gone.followee_id
db.users.updateMany({_id: {$in: [from, to]}}, [{$set: {
  follower_count: {$subtract: ["$follower_count", {$cond: [{$eq: ["$_id", to]}, 1, 0]}]},
  following_count: {$subtract: ["$following_count", {$cond: [{$eq: ["$_id", from]}, 1, 0]}]}
}}])

// @op post
db.posts.insertMany([{_id: postId, author_id: a, title: "hello", created_at: now}])
db.users.updateOne({_id: a}, {$inc: {post_count: 1}})

// @op counts
db.users.aggregate([{$match: {_id: {$in: [userId, otherId, celebId]}}}, {$project: {follower_count: 1, following_count: 1}}])

// @op feed
const authors = db.links.distinct("followee_id", {follower_id: userId})
db.posts.aggregate([{$match: {author_id: {$in: authors}}}, {$sort: {created_at: -1, _id: -1}}, {$limit: 20}, {$project: {_id: 1}}])
