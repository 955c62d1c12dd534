// Pure references: every relationship is an id, every screen joins.
db.posts.createIndex({status: 1, created_at: -1})
db.posts.createIndex({author_id: 1})
db.comments.createIndex({post_id: 1, created_at: -1})
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1, created_at: -1})
// Uniqueness the application relies on: one account per handle and per
// email address, one post per URL slug.
db.users.createIndex({handle: 1}, {unique: true})
db.users.createIndex({email: 1}, {unique: true})
db.posts.createIndex({slug: 1}, {unique: true})
