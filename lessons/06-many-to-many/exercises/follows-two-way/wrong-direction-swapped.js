// Mistake: the design is right, but the read confuses the two directions:
// it returns who follows userId, not whom userId follows.
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1, follower_id: 1})

// @op follow
db.follows.insertOne({follower_id: fan, followee_id: celebId, created_at: new Date()})

// @op following
db.follows.find({followee_id: userId}, {_id: 0, followee_id: "$follower_id"})
