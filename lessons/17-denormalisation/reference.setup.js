// References only: posts keep author_id and the list joins users by _id.
db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({author_id: 1})
db.comments.drop()
db.follows.drop()
