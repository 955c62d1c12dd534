// Pure embedding: each post carries a full copy of its author's profile and
// every comment (newest first). Threads are capped at 10 000 comments so the
// largest scale still fits in 16 MiB.
db.posts.aggregate([
  {$project: {_id: 0, a: "$author_id", pid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", name: "$name", avatar: "$avatar", bio: "$bio", location: "$location", verified: "$verified"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, pids: {$push: "$pid"}}},
  {$unwind: "$pids"},
  {$project: {_id: "$pids", author: 1}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({}, {$unset: {author_id: ""}})
db.comments.aggregate([
  {$sort: {created_at: -1}},
  {$group: {_id: "$post_id", comment_count: {$sum: 1}, comments: {$push: {_id: "$_id", author_id: "$author_id", body: "$body", created_at: "$created_at", likes: "$likes"}}}},
  {$set: {comments: {$slice: ["$comments", 10000]}}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({comment_count: {$exists: false}}, {$set: {comment_count: 0, comments: []}})
db.comments.drop()
db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({"author._id": 1})
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1, created_at: -1})
// Uniqueness the application relies on: one account per handle and per
// email address, one post per URL slug.
db.users.createIndex({handle: 1}, {unique: true})
db.users.createIndex({email: 1}, {unique: true})
db.posts.createIndex({slug: 1}, {unique: true})
