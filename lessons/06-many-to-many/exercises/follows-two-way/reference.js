// One document per follow, indexed both ways.
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1})

// @op follow
db.follows.insertOne({follower_id: fan, followee_id: celebId, created_at: new Date()})

// @op following
db.follows.find({follower_id: userId}, {_id: 0, followee_id: 1})
