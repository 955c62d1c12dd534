// The schema you inherited: every post copies three fields of its author.
db.posts.aggregate([
  {$lookup: {from: "users", localField: "author_id", foreignField: "_id", as: "a"}},
  {$set: {author_handle: {$first: "$a.handle"}, author_followers: {$first: "$a.follower_count"}, author_email: {$first: "$a.email"}}},
  {$unset: "a"},
  {$out: "posts"}
])

// Your fixes go below.


// @op author_page


// @op new_follower


// @op rename


// @op author_page_after


// @op follower_count

