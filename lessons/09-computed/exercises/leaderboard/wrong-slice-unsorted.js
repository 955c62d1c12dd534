// Mistake: the leaderboard is cut to five without sorting, so a new
// post pushes out the last entry whatever its likes.
// Each author's five most liked posts, computed once.
db.posts.aggregate([
  {$sort: {likes: -1, _id: 1}},
  {$group: {_id: "$author_id", top_posts: {$push: {post_id: "$_id", likes: "$likes"}}}},
  {$set: {top_posts: {$slice: ["$top_posts", 5]}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op profile
db.users.findOne({_id: userId}, {handle: 1, top_posts: 1})

// @op new_post
db.posts.insertOne({_id: pid, author_id: userId, title: "a new post", likes: (i * 37) % 1000, created_at: new Date()})
db.users.updateOne({_id: userId}, {$push: {top_posts: {$each: [{post_id: pid, likes: (i * 37) % 1000}], $slice: 5}}})
