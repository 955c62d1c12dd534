// Follows stay as they are; counts are bumped on every call.
db.follows.createIndex({follower_id: 1})
db.posts.createIndex({author_id: 1, created_at: -1})

// @op follow
db.follows.insertOne({follower_id: a, followee_id: b, created_at: new Date()})
db.users.updateOne({_id: b}, {$inc: {follower_count: 1}})
db.users.updateOne({_id: a}, {$inc: {following_count: 1}})

// @op unfollow
db.follows.deleteOne({follower_id: a, followee_id: b})
db.users.updateOne({_id: b}, {$inc: {follower_count: -1}})
db.users.updateOne({_id: a}, {$inc: {following_count: -1}})

// @op post
db.posts.insertOne({_id: postId, author_id: a, title: "news", created_at: now, likes: 0})
db.users.updateOne({_id: a}, {$inc: {post_count: 1}})

// @op counts
db.users.find({_id: {$in: [userId, otherId, celebId]}}, {follower_count: 1, following_count: 1})

// @op feed
const followed = db.follows.distinct("followee_id", {follower_id: userId})
db.posts.find({author_id: {$in: followed}}).sort({created_at: -1, _id: -1}).limit(20)
