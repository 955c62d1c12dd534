// An alternative correct design, written apart from the reference: the
// leaderboard is built with $topN, and a new post is written and ranked by
// one bulkWrite per collection.
db.posts.aggregate([
  {$group: {_id: "$author_id", top_posts: {$topN: {n: 5, sortBy: {likes: -1}, output: {post_id: "$_id", likes: "$likes"}}}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op profile
db.users.find({_id: userId}, {_id: 0, top_posts: 1})

// @op new_post
const score = (i * 37) % 1000
db.posts.bulkWrite([{insertOne: {document: {_id: pid, author_id: userId, title: "post " + i, likes: score}}}])
db.users.updateOne({_id: userId}, {$push: {top_posts: {$each: [{post_id: pid, likes: score}], $sort: {likes: -1, post_id: 1}, $slice: 5}}})
