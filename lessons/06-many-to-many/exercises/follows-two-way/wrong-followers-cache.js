// Mistake: follows are documents, and "for a fast follower list" the
// followee also keeps a followers array: the celebrity's document grows
// with every fan again.
db.follows.createIndex({follower_id: 1, followee_id: 1}, {unique: true})
db.follows.createIndex({followee_id: 1})

// @op follow
db.follows.insertOne({follower_id: fan, followee_id: celebId, created_at: new Date()})
db.users.updateOne({_id: celebId}, {$push: {followers: fan}})

// @op following
db.follows.find({follower_id: userId}, {_id: 0, followee_id: 1})
