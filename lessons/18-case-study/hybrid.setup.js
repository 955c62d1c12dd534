// The hybrid: three patterns layered on a referenced core.

// 1. Extended reference: posts and comments carry a small author summary.
db.posts.aggregate([
  {$project: {_id: 0, a: "$author_id", pid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", avatar: "$avatar"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, pids: {$push: "$pid"}}},
  {$unwind: "$pids"},
  {$project: {_id: "$pids", author: 1}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({}, {$unset: {author_id: ""}})
db.comments.aggregate([
  {$project: {_id: 0, a: "$author_id", cid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", avatar: "$avatar"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, cids: {$push: "$cid"}}},
  {$unwind: "$cids"},
  {$project: {_id: "$cids", author: 1}},
  {$merge: {into: "comments", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.comments.updateMany({}, {$unset: {author_id: ""}})

// 2. Subset and 3. computed: the ten newest comments and the comment count
// live in the post; all comments stay in `comments`.
db.comments.aggregate([
  {$group: {
    _id: "$post_id",
    comment_count: {$sum: 1},
    recent_comments: {$topN: {
      n: 10,
      sortBy: {created_at: -1, _id: 1},
      output: {_id: "$_id", author: "$author", body: "$body", created_at: "$created_at", likes: "$likes"}
    }}
  }},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, recent_comments: []}})

db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({"author._id": 1})
db.comments.createIndex({post_id: 1, created_at: -1})
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1, created_at: -1})
// Uniqueness the application relies on: one account per handle and per
// email address, one post per URL slug.
db.users.createIndex({handle: 1}, {unique: true})
db.users.createIndex({email: 1}, {unique: true})
db.posts.createIndex({slug: 1}, {unique: true})
