// Mistake: the rename updates the user only; the copies kept in the posts
// keep the old handle.
// The schema you inherited: every post copies three fields of its author.
db.posts.aggregate([
  {$lookup: {from: "users", localField: "author_id", foreignField: "_id", as: "a"}},
  {$set: {author_handle: {$first: "$a.handle"}, author_followers: {$first: "$a.follower_count"}, author_email: {$first: "$a.email"}}},
  {$unset: "a"},
  {$out: "posts"}
])

// Keep the handle (read with every post, rarely changed); drop the rest.
db.posts.updateMany({}, {$unset: {author_followers: "", author_email: ""}})
db.posts.createIndex({author_id: 1, created_at: -1, _id: -1})

// @op author_page
db.posts.find({author_id: authorId}, {title: 1, author_handle: 1}).sort({created_at: -1, _id: -1}).limit(20)

// @op new_follower
db.users.updateOne({_id: authorId}, {$inc: {follower_count: 1}})

// @op rename
db.users.updateOne({_id: authorId}, {$set: {handle: newHandle}})

// @op author_page_after
db.posts.find({author_id: authorId}, {title: 1, author_handle: 1}).sort({created_at: -1, _id: -1}).limit(20)

// @op follower_count
db.users.findOne({_id: authorId}, {follower_count: 1})
