// Mistake: follows are documents (right), but the only index leads with
// the followee, the celebrity's side: whom a user follows scans every
// follow.
db.follows.createIndex({followee_id: 1, follower_id: 1}, {unique: true})

// @op follow
db.follows.insertOne({follower_id: fan, followee_id: celebId, created_at: new Date()})

// @op following
db.follows.find({follower_id: userId}, {_id: 0, followee_id: 1})
