// An alternative correct design, written apart from the reference: the
// leaderboard is built by sorting and taking the first five per author,
// and a new post re-ranks it with a pipeline update ($sortArray, $slice).
db.posts.aggregate([
  {$sort: {author_id: 1, likes: -1}},
  {$group: {_id: "$author_id", top_posts: {$firstN: {n: 5, input: {post_id: "$_id", likes: "$likes"}}}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op profile
db.users.aggregate([{$match: {_id: userId}}, {$project: {top_posts: 1}}])

// @op new_post
db.posts.insertMany([{_id: pid, author_id: userId, title: "new", likes: (i * 37) % 1000}])
db.users.updateOne({_id: userId}, [{$set: {top_posts: {$slice: [{$sortArray: {input: {$concatArrays: [{$ifNull: ["$top_posts", []]}, [{post_id: pid, likes: (i * 37) % 1000}]]}, sortBy: {likes: -1}}}, 5]}}}])
