// Comments only in their own collection. comment_count is added to posts
// solely so the workload can pick the most discussed post.
db.comments.createIndex({post_id: 1, created_at: -1})
db.comments.aggregate([
  {$group: {_id: "$post_id", comment_count: {$sum: 1}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.follows.drop()
