// Build the leaderboard once; from then on every like that could matter is a
// $push with $sort and $slice on this one document.
db.posts.aggregate([
  {$sort: {likes: -1, _id: 1}},
  {$limit: 10},
  {$group: {_id: "top_posts", top: {$push: {post_id: "$_id", title: "$title", likes: "$likes"}}}},
  {$out: "leaderboards"}
])
db.follows.drop()
