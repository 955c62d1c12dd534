// Mistake: nothing is computed at write time: the profile sorts the
// author's posts on every read (an index makes it cheap-looking, but it
// still reads five posts and the user, every time).
db.posts.createIndex({author_id: 1, likes: -1})

// @op profile
db.posts.aggregate([
  {$match: {author_id: userId}},
  {$sort: {likes: -1}},
  {$limit: 5},
  {$group: {_id: "$author_id", top_posts: {$push: {post_id: "$_id", likes: "$likes"}}}}
])

// @op new_post
db.posts.insertOne({_id: pid, author_id: userId, title: "a new post", likes: (i * 37) % 1000})
