// Mistake: no limits: every bucket of the user is read and every view
// returned.
// Each user's views in time order, cut into runs of 500.
db.comments.aggregate([
  {$sort: {author_id: 1, created_at: 1}},
  {$group: {_id: "$author_id", views: {$push: {post_id: "$post_id", ts: "$created_at"}}}},
  {$set: {starts: {$range: [0, {$size: "$views"}, 500]}}},
  {$unwind: "$starts"},
  {$set: {views: {$slice: ["$views", "$starts", 500]}}},
  {$project: {_id: 0, user_id: "$_id", views: 1, count: {$size: "$views"}, first: {$min: "$views.ts"}, last: {$max: "$views.ts"}}},
  {$out: "history"}
])
db.comments.drop()
db.history.createIndex({user_id: 1, last: -1})

// @op view
db.history.updateOne(
  {user_id: userId, count: {$lt: 500}},
  {$push: {views: {post_id: postId, ts: new Date(at)}}, $inc: {count: 1}, $min: {first: new Date(at)}, $max: {last: new Date(at)}},
  {upsert: true}
)

// @op latest
db.history.aggregate([
  {$match: {user_id: userId}},
  {$sort: {last: -1}},
  {$unwind: "$views"},
  {$replaceWith: "$views"},
  {$sort: {ts: -1}},
])
