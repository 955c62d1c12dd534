// An alternative correct design, written apart from the reference: the
// follows collection stays, a follow is an idempotent upsert, and one
// index per direction leads with that direction's user.
db.follows.createIndex({follower_id: 1})
db.follows.createIndex({followee_id: 1, follower_id: 1})

// @op follow
db.follows.updateOne({follower_id: fan, followee_id: celebId}, {$setOnInsert: {created_at: new Date()}}, {upsert: true})

// @op following
db.follows.find({follower_id: userId}).sort({followee_id: 1})
