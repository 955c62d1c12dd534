// The same 500 posts as the embedded design (all of them at the tiny scale).
const cut = db.posts.find({}, {_id: 1}).sort({_id: 1}).skip(500).limit(1).toArray()
if (cut.length > 0) db.posts.deleteMany({_id: {$gte: cut[0]._id}})
db.comments.drop()
db.follows.drop()
db.users.drop()
// The whole history, forty revisions per post, in its own collection, each
// post's revisions stored together.
db.posts.aggregate([
  {$project: {revisions: {$map: {
    input: {$range: [1, 41]},
    as: "r",
    in: {_id: {post: "$_id", rev: "$$r"}, post_id: "$_id", rev: "$$r", edited_at: {$add: ["$created_at", {$multiply: ["$$r", 3600000]}]}, editor_id: "$author_id", body: "$body"}
  }}}},
  {$unwind: "$revisions"},
  {$replaceWith: "$revisions"},
  {$out: "revisions"}
])
db.revisions.createIndex({post_id: 1, rev: -1})
// The post keeps only what its page shows: the last three edits, without
// their bodies (the collection rewritten, as in the embedded design).
db.posts.aggregate([
  {$set: {edit_count: 40, recent_edits: {$map: {
    input: {$range: [38, 41]},
    as: "r",
    in: {rev: "$$r", edited_at: {$add: ["$created_at", {$multiply: ["$$r", 3600000]}]}, editor_id: "$author_id"}
  }}}},
  {$out: "posts"}
])
