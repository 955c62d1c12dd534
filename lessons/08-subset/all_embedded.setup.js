// Every comment moves into its post, newest first. The very largest threads
// at the large scale would not fit in 16 MiB, so threads are capped at
// 10 000 comments: the cap itself is the warning sign.
db.comments.aggregate([
  {$sort: {created_at: -1}},
  {$group: {_id: "$post_id", comment_count: {$sum: 1}, comments: {$push: {_id: "$_id", author_id: "$author_id", body: "$body", created_at: "$created_at", likes: "$likes"}}}},
  {$set: {comments: {$slice: ["$comments", 10000]}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, comments: []}})
db.comments.drop()
db.follows.drop()
