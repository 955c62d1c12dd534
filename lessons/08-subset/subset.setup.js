// Comments stay in their own collection (the full history). Each post gets
// the ten newest as recent_comments, plus comment_count.
db.comments.createIndex({post_id: 1, created_at: -1})
db.comments.aggregate([
  {$sort: {created_at: -1}},
  {$group: {_id: "$post_id", comment_count: {$sum: 1}, recent_comments: {$push: {_id: "$_id", author_id: "$author_id", body: "$body", created_at: "$created_at", likes: "$likes"}}}},
  {$set: {recent_comments: {$slice: ["$recent_comments", 10]}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, recent_comments: []}})
db.follows.drop()
