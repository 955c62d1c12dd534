// Mistake: one index per query: the inbox's, and another for the unread
// count. Every notification written now updates two indexes where one
// would serve both reads.
db.notifications.createIndex({recipient_id: 1, created_at: -1})
db.notifications.createIndex({recipient_id: 1, read: 1})

// @op inbox
db.notifications.find({recipient_id: userId}).sort({created_at: -1}).limit(20)

// @op unread
db.notifications.countDocuments({recipient_id: userId, read: false})

// @op mention
db.notifications.insertOne({type: "mention", recipient_id: userId, actor_id: actorId, created_at: new Date(at), read: false, context: "hello"})
