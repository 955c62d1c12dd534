// One history document per user, holding every view.
db.comments.aggregate([
  {$sort: {author_id: 1, created_at: 1}},
  {$group: {_id: "$author_id", views: {$push: {post_id: "$post_id", ts: "$created_at"}}}},
  {$project: {_id: 0, user_id: "$_id", views: 1, count: {$size: "$views"}, last: {$max: "$views.ts"}}},
  {$out: "history"}
])
db.comments.drop()
db.history.createIndex({user_id: 1, last: -1})

// @op view
db.history.updateOne(
  {user_id: userId},
  {$push: {views: {post_id: postId, ts: new Date(at)}}, $inc: {count: 1}, $max: {last: new Date(at)}},
  {upsert: true}
)

// @op latest
db.history.aggregate([
  {$match: {user_id: userId}},
  {$sort: {last: -1}},
  {$limit: 3},
  {$unwind: "$views"},
  {$replaceWith: "$views"},
  {$sort: {ts: -1}},
  {$limit: 1000}
])
