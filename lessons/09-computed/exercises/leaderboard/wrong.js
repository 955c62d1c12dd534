// Every post's score kept in the user; the top five sorted on read.
db.posts.aggregate([
  {$group: {_id: "$author_id", scores: {$push: {post_id: "$_id", likes: "$likes"}}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op profile
db.users.aggregate([
  {$match: {_id: userId}},
  {$project: {handle: 1, top_posts: {$slice: [{$sortArray: {input: "$scores", sortBy: {likes: -1}}}, 5]}}}
])

// @op new_post
db.posts.insertOne({_id: pid, author_id: userId, title: "a new post", likes: (i * 37) % 1000, created_at: new Date()})
db.users.updateOne({_id: userId}, {$push: {scores: {post_id: pid, likes: (i * 37) % 1000}}})
