// Mistake: "each type has its own fields", so the mention gets its own
// names for the shared ones too (to, at, seen): the inbox and the unread
// count, which read the shared fields, never see it.
db.notifications.createIndex({recipient_id: 1, created_at: -1})

// @op inbox
db.notifications.find({recipient_id: userId}).sort({created_at: -1}).limit(20)

// @op unread
db.notifications.countDocuments({recipient_id: userId, read: false})

// @op mention
db.notifications.insertOne({type: "mention", to: userId, from: actorId, at: new Date(at), seen: false, context: "hello"})
