// An alternative correct design, written apart from the reference: the
// unwanted copies are dropped by rewriting the collection with an
// aggregate, and the page is an aggregate with the stated tie-breaker.
db.posts.aggregate([
  {$lookup: {from: "users", localField: "author_id", foreignField: "_id", as: "a"}},
  {$set: {author_handle: {$first: "$a.handle"}, author_followers: {$first: "$a.follower_count"}, author_email: {$first: "$a.email"}}},
  {$unset: "a"},
  {$out: "posts"}
])
db.posts.aggregate([{$project: {author_followers: 0, author_email: 0}}, {$out: "posts"}])
db.posts.createIndex({author_id: 1, created_at: -1, _id: -1}, {name: "author_page"})

// @op author_page
db.posts.aggregate([
  {$match: {author_id: authorId}},
  {$sort: {created_at: -1, _id: -1}},
  {$limit: 20},
  {$project: {_id: 0, title: 1, author_handle: 1}}
])

// @op new_follower
db.users.updateOne({_id: authorId}, {$inc: {follower_count: 1}})

// @op rename
db.posts.updateMany({author_id: authorId}, {$set: {author_handle: newHandle}})
db.users.updateOne({_id: authorId}, {$set: {handle: newHandle}})

// @op author_page_after
db.posts.aggregate([
  {$match: {author_id: authorId}},
  {$sort: {created_at: -1, _id: -1}},
  {$limit: 20},
  {$project: {_id: 0, title: 1, author_handle: 1}}
])

// @op follower_count
db.users.find({_id: authorId}, {_id: 0, follower_count: 1})
