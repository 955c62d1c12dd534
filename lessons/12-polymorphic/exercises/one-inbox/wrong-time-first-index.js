// Mistake: the index's fields in the wrong order, time first: the inbox
// walks every user's notifications newest first until 20 of this user's
// turn up.
db.notifications.createIndex({created_at: -1, recipient_id: 1})

// @op inbox
db.notifications.find({recipient_id: userId}).sort({created_at: -1}).limit(20)

// @op unread
db.notifications.countDocuments({recipient_id: userId, read: false})

// @op mention
db.notifications.insertOne({type: "mention", recipient_id: userId, actor_id: actorId, created_at: new Date(at), read: false, context: "hello"})
