// Mistake: the home page's index holds the status only, so the read
// fetches every published post and sorts them to keep 20.
db.comments.aggregate([
  {$group: {_id: "$post_id", comment_count: {$sum: 1}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: null}, {$set: {comment_count: 0}})
db.posts.createIndex({status: 1})
db.posts.createIndex({author_id: 1})
db.comments.createIndex({post_id: 1, created_at: -1})

// @op home
db.posts.find({status: "published"}, {_id: 1, title: 1, comment_count: 1}).sort({created_at: -1}).limit(20)

// @op post_page
const newest = db.comments.find({post_id: postId}, {_id: 1, author_id: 1, created_at: 1}).sort({created_at: -1}).limit(10).toArray()
db.posts.aggregate([{$match: {_id: postId}}, {$set: {recent_comments: {$literal: newest}}}])

// @op comment
db.comments.insertOne({_id: commentId, post_id: postId, author_id: authorId, body: "Thanks for this.", created_at: new Date(at), likes: 0})
db.posts.updateOne({_id: postId}, {$inc: {comment_count: 1}})

// @op analytics
db.posts.aggregate([
  {$match: {author_id: authorId}},
  {$group: {_id: null, posts: {$sum: 1}, likes: {$sum: "$likes"}, comments: {$sum: "$comment_count"}}}
])

// @op post_count
db.posts.findOne({_id: postId}, {comment_count: 1})
