// Everything about a post in the post: its author and all of its comments,
// newest first.
db.comments.aggregate([
  {$sort: {created_at: -1}},
  {$group: {_id: "$post_id", comment_count: {$sum: 1}, recent_comments: {$push: {_id: "$_id", author_id: "$author_id", body: "$body", created_at: "$created_at", likes: "$likes"}}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, recent_comments: []}})
db.comments.drop()
db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({author_id: 1})

// @op home
db.posts.find({status: "published"}, {title: 1, created_at: 1, comment_count: 1}).sort({created_at: -1}).limit(20)

// @op post_page
db.posts.findOne({_id: postId}, {title: 1, body: 1, recent_comments: {$slice: 10}})

// @op comment
db.posts.updateOne({_id: postId}, {$push: {recent_comments: {$each: [{_id: commentId, author_id: authorId, body: "Thanks for this.", created_at: new Date(at), likes: 0}], $position: 0}}, $inc: {comment_count: 1}})

// @op analytics
db.posts.aggregate([{$match: {author_id: authorId}}, {$group: {_id: null, posts: {$sum: 1}, likes: {$sum: "$likes"}, comments: {$sum: "$comment_count"}}}])

// @op post_count
db.posts.findOne({_id: postId}, {comment_count: 1})
