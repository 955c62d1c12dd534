// One collection, one index in the inbox's order.
db.notifications.createIndex({recipient_id: 1, created_at: -1})

// @op inbox
db.notifications.find({recipient_id: userId}).sort({created_at: -1}).limit(20)

// @op unread
db.notifications.countDocuments({recipient_id: userId, read: false})

// @op mention
db.notifications.insertOne({type: "mention", recipient_id: userId, actor_id: actorId, created_at: new Date(at), read: false, context: "hello"})
