// No precomputation: the hall of fame is sorted from posts on every view,
// through the index a competent engineer gives that sort.
db.posts.createIndex({likes: -1})
db.follows.drop()
