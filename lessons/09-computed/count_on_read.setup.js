// Comments indexed by post: counting one post's comments is an index range.
db.comments.createIndex({post_id: 1})
db.follows.drop()
