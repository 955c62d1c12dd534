// An alternative correct design, written apart from the reference: posts
// keep author_id (no author summary), the subset holds a small summary of
// the ten newest comments and is kept by a $push that sorts before it
// slices; home walks an ascending index backwards.
db.comments.createIndex({post_id: 1, created_at: -1})
db.comments.aggregate([
  {$sort: {post_id: 1, created_at: -1}},
  {$group: {_id: "$post_id", comment_count: {$sum: 1}, recent_comments: {$firstN: {n: 10, input: {_id: "$_id", author_id: "$author_id", created_at: "$created_at"}}}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, [{$set: {comment_count: 0, recent_comments: []}}])
db.posts.createIndex({status: 1, created_at: 1})
db.posts.createIndex({author_id: 1})

// @op home
db.posts.aggregate([{$match: {status: "published"}}, {$sort: {created_at: -1}}, {$limit: 20}, {$project: {title: 1, comment_count: 1, created_at: 1}}])

// @op post_page
db.posts.find({_id: postId}, {title: 1, body: 1, recent_comments: 1})

// @op comment
db.comments.insertOne({_id: commentId, post_id: postId, author_id: authorId, body: "Thanks for this.", created_at: new Date(at), likes: 0})
db.posts.updateOne({_id: postId}, {$inc: {comment_count: 1}, $push: {recent_comments: {$each: [{_id: commentId, author_id: authorId, created_at: new Date(at)}], $sort: {created_at: -1}, $slice: 10}}})

// @op analytics
db.posts.aggregate([
  {$match: {author_id: authorId}},
  {$group: {_id: "$author_id", posts: {$count: {}}, likes: {$sum: "$likes"}, comments: {$sum: "$comment_count"}}}
])

// @op post_count
db.posts.aggregate([{$match: {_id: postId}}, {$project: {_id: 0, comment_count: 1}}])
