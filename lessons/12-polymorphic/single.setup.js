// All types side by side; `type` says which optional fields to expect.
db.notifications.createIndex({recipient_id: 1, created_at: -1})
