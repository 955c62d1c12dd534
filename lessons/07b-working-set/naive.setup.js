// The lesson is about the cache, not volume: keep the first 500 posts (all
// of them at the tiny scale), so it runs quickly at every scale.
const cut = db.posts.find({}, {_id: 1}).sort({_id: 1}).skip(500).limit(1).toArray()
if (cut.length > 0) db.posts.deleteMany({_id: {$gte: cut[0]._id}})
db.comments.drop()
db.follows.drop()
db.users.drop()
// Every post carries its whole edit history: forty earlier versions of its
// body, one an hour after it was posted. The collection is rewritten
// ($out), as a bulk load would write it, rather than grown in place.
db.posts.aggregate([
  {$set: {history: {$map: {
    input: {$range: [1, 41]},
    as: "r",
    in: {rev: "$$r", edited_at: {$add: ["$created_at", {$multiply: ["$$r", 3600000]}]}, editor_id: "$author_id", body: "$body"}
  }}}},
  {$out: "posts"}
])
