// An alternative correct design, written apart from the reference: the
// index keeps created_at ascending (the inbox walks it backwards) and the
// new mention is written with insertMany and its type-specific fields.
db.notifications.createIndex({recipient_id: 1, created_at: 1}, {name: "inbox"})

// @op inbox
db.notifications.find({recipient_id: userId}, {type: 1, created_at: 1, read: 1, actor_id: 1}).sort({created_at: -1}).limit(20)

// @op unread
db.notifications.countDocuments({read: false, recipient_id: userId})

// @op mention
db.notifications.insertMany([{recipient_id: userId, type: "mention", created_at: new Date(at), read: false, actor_id: actorId, context: "hello"}])
