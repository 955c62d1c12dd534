// One document per edge. The unique index answers "does A follow B" and
// "whom does A follow"; the second index lists a user's followers by date.
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1, created_at: -1})
db.posts.drop()
db.comments.drop()
