// Mistake: the new post only enters the leaderboard; it is never written
// to posts.
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
db.users.updateOne({_id: userId}, {$push: {top_posts: {$each: [{post_id: pid, likes: (i * 37) % 1000}], $sort: {likes: -1}, $slice: 5}}})
