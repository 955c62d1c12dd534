// Mistake: the page pipeline limits before it sorts, so it sorts whichever
// 20 posts the index on author_id gives first, not the newest 20.
db.posts.aggregate([
  {$lookup: {from: "users", localField: "author_id", foreignField: "_id", as: "a"}},
  {$set: {author_handle: {$first: "$a.handle"}, author_followers: {$first: "$a.follower_count"}, author_email: {$first: "$a.email"}}},
  {$unset: "a"},
  {$out: "posts"}
])
db.posts.updateMany({}, {$unset: {author_followers: "", author_email: ""}})
db.posts.createIndex({author_id: 1})

// @op author_page
db.posts.aggregate([{$match: {author_id: authorId}}, {$limit: 20}, {$sort: {created_at: -1, _id: -1}}, {$project: {title: 1, author_handle: 1}}])

// @op new_follower
db.users.updateOne({_id: authorId}, {$inc: {follower_count: 1}})

// @op rename
db.users.updateOne({_id: authorId}, {$set: {handle: newHandle}})
db.posts.updateMany({author_id: authorId}, {$set: {author_handle: newHandle}})

// @op author_page_after
db.posts.aggregate([{$match: {author_id: authorId}}, {$limit: 20}, {$sort: {created_at: -1, _id: -1}}, {$project: {title: 1, author_handle: 1}}])

// @op follower_count
db.users.findOne({_id: authorId}, {follower_count: 1})
