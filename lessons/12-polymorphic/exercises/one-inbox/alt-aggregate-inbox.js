// An alternative correct design, written apart from the reference: one
// index on the shared fields (recipient, time, read), the inbox as an
// aggregation, and the mention as an upsert keyed by its own fields.
db.notifications.createIndex({recipient_id: 1, created_at: -1, read: 1})

// @op inbox
db.notifications.aggregate([{$match: {recipient_id: userId}}, {$sort: {created_at: -1}}, {$limit: 20}, {$project: {_id: 0, type: 1, created_at: 1}}])

// @op unread
db.notifications.countDocuments({recipient_id: userId, read: false})

// @op mention
db.notifications.updateOne(
  {recipient_id: userId, type: "mention", actor_id: actorId, created_at: new Date(at)},
  {$setOnInsert: {read: false, context: "hello"}},
  {upsert: true}
)
