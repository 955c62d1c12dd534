// Mistake: new comments are appended to the subset, and $slice: 10 keeps
// the first ten, so the subset never shows a new comment.
// The hybrid: three patterns layered on a referenced core.

// 1. Extended reference: posts and comments carry a small author summary.
db.posts.aggregate([
  {$project: {_id: 0, a: "$author_id", pid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", avatar: "$avatar"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, pids: {$push: "$pid"}}},
  {$unwind: "$pids"},
  {$project: {_id: "$pids", author: 1}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({}, {$unset: {author_id: ""}})
db.comments.aggregate([
  {$project: {_id: 0, a: "$author_id", cid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", avatar: "$avatar"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, cids: {$push: "$cid"}}},
  {$unwind: "$cids"},
  {$project: {_id: "$cids", author: 1}},
  {$merge: {into: "comments", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.comments.updateMany({}, {$unset: {author_id: ""}})

// 2. Subset and 3. computed: the ten newest comments and the comment count
// live in the post; all comments stay in `comments`.
db.comments.aggregate([
  {$sort: {created_at: -1}},
  {$group: {_id: "$post_id", comment_count: {$sum: 1}, recent_comments: {$push: {_id: "$_id", author: "$author", body: "$body", created_at: "$created_at", likes: "$likes"}}}},
  {$set: {recent_comments: {$slice: ["$recent_comments", 10]}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, recent_comments: []}})

db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({"author._id": 1})
db.comments.createIndex({post_id: 1, created_at: -1})
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1, created_at: -1})

// @op home
db.posts.find({status: "published"}, {title: 1, author: 1, created_at: 1, likes: 1, comment_count: 1}).sort({created_at: -1}).limit(20)

// @op post_page
db.posts.findOne({_id: postId})

// @op comment
const who = db.users.findOne({_id: authorId}, {handle: 1, avatar: 1})
db.comments.insertOne({_id: commentId, post_id: postId, author: who, body: "Thanks for this.", created_at: new Date(at), likes: 0})
db.posts.updateOne({_id: postId}, {$push: {recent_comments: {$each: [{_id: commentId, author: who, body: "Thanks for this.", created_at: new Date(at), likes: 0}], $slice: 10}}, $inc: {comment_count: 1}})

// @op analytics
db.posts.aggregate([{$match: {"author._id": authorId}}, {$group: {_id: null, posts: {$sum: 1}, likes: {$sum: "$likes"}, comments: {$sum: "$comment_count"}}}])

// @op post_count
db.posts.findOne({_id: postId}, {comment_count: 1})
