// An alternative correct design, written apart from the reference: the
// two unwanted copies are removed with a pipeline update, the page walks
// an ascending index backwards, and the counter and the rename use
// findOneAndUpdate and a pipeline updateMany.
db.posts.aggregate([
  {$lookup: {from: "users", localField: "author_id", foreignField: "_id", as: "a"}},
  {$set: {author_handle: {$first: "$a.handle"}, author_followers: {$first: "$a.follower_count"}, author_email: {$first: "$a.email"}}},
  {$unset: "a"},
  {$out: "posts"}
])
db.posts.updateMany({}, [{$unset: ["author_followers", "author_email"]}])
db.posts.createIndex({author_id: 1, created_at: 1, _id: 1})

// @op author_page
db.posts.find({author_id: authorId}, {_id: 0, title: 1, author_handle: 1, created_at: 1}).sort({created_at: -1, _id: -1}).limit(20)

// @op new_follower
db.users.findOneAndUpdate({_id: authorId}, {$inc: {follower_count: 1}})

// @op rename
db.users.updateOne({_id: authorId}, [{$set: {handle: newHandle}}])
db.posts.updateMany({author_id: authorId}, [{$set: {author_handle: newHandle}}])

// @op author_page_after
db.posts.find({author_id: authorId}, {_id: 0, title: 1, author_handle: 1, created_at: 1}).sort({created_at: -1, _id: -1}).limit(20)

// @op follower_count
db.users.aggregate([{$match: {_id: authorId}}, {$project: {_id: 0, follower_count: 1}}])
