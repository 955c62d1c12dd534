// An alternative correct design, written apart from the reference: buckets
// live in `history` with the array `views` and a size; the seeded views
// are cut into buckets by their position ($unwind includeArrayIndex), and
// the read finds the user's three fullest-last buckets through the newest
// view time each bucket holds (`newest`).
db.comments.aggregate([
  {$sort: {author_id: 1, created_at: 1, _id: 1}},
  {$group: {_id: "$author_id", all: {$push: {post_id: "$post_id", ts: "$created_at"}}}},
  {$unwind: {path: "$all", includeArrayIndex: "pos"}},
  {$group: {_id: {user: "$_id", b: {$floor: {$divide: ["$pos", 500]}}}, views: {$push: "$all"}, newest: {$max: "$all.ts"}}},
  {$project: {_id: 0, user_id: "$_id.user", views: 1, newest: 1, size: {$size: "$views"}}},
  {$out: "history"}
])
db.history.createIndex({user_id: 1, newest: 1})

// @op view
db.history.updateOne(
  {user_id: userId, size: {$lte: 499}},
  {$push: {views: {post_id: postId, ts: new Date(at)}}, $inc: {size: 1}, $max: {newest: new Date(at)}},
  {upsert: true}
)

// @op latest
db.history.aggregate([
  {$match: {user_id: userId}},
  {$sort: {newest: -1}},
  {$limit: 3},
  {$project: {_id: 0, views: 1}},
  {$unwind: "$views"},
  {$project: {post_id: "$views.post_id", ts: "$views.ts"}},
  {$sort: {ts: -1}},
  {$limit: 1000}
])
