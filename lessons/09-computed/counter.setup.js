// The same index, plus comment_count on every post, computed once here and
// afterwards kept up to date with $inc whenever a comment is written.
db.comments.createIndex({post_id: 1})
db.posts.updateMany({}, {$set: {comment_count: 0}})
db.comments.aggregate([
  {$group: {_id: "$post_id", comment_count: {$sum: 1}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.follows.drop()
