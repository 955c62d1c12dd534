// An alternative correct design, written apart from the reference: each
// bucket carries the time it was opened and its size (n); the read takes
// the three most recently opened, then the 1,000 newest views.
db.comments.aggregate([
  {$sort: {author_id: 1, created_at: 1, _id: 1}},
  {$group: {_id: "$author_id", all: {$push: {post_id: "$post_id", ts: "$created_at"}}}},
  {$set: {starts: {$range: [0, {$size: "$all"}, 500]}}},
  {$unwind: "$starts"},
  {$project: {_id: 0, user_id: "$_id", views: {$slice: ["$all", "$starts", 500]}}},
  {$set: {n: {$size: "$views"}, opened: {$first: "$views.ts"}}},
  {$out: "history"}
])
db.history.createIndex({user_id: 1, opened: -1})

// @op view
db.history.updateOne(
  {user_id: userId, n: {$lt: 500}},
  {$push: {views: {post_id: postId, ts: new Date(at)}}, $inc: {n: 1}, $setOnInsert: {opened: new Date(at)}},
  {upsert: true}
)

// @op latest
db.history.aggregate([
  {$match: {user_id: userId}},
  {$sort: {opened: -1}},
  {$limit: 3},
  {$unwind: "$views"},
  {$sort: {"views.ts": -1}},
  {$limit: 1000},
  {$project: {_id: 0, post_id: "$views.post_id", ts: "$views.ts"}}
])
