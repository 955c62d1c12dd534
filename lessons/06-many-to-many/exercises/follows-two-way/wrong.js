// Both directions embedded in the user document.
db.follows.aggregate([
  {$group: {_id: "$followee_id", followers: {$push: "$follower_id"}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.follows.aggregate([
  {$group: {_id: "$follower_id", following: {$push: "$followee_id"}}},
  {$merge: {into: "users", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.follows.drop()

// @op follow
db.users.updateOne({_id: celebId}, {$push: {followers: fan}})

// @op following
db.users.aggregate([
  {$match: {_id: userId}},
  {$unwind: "$following"},
  {$project: {_id: 0, followee_id: "$following"}}
])
