// Mistake: the sort runs the wrong way: the 50 oldest errors, not the
// newest.
// Each line references its host; the host knows nothing of its lines.
db.logs.createIndex({host_id: 1, level: 1, ts: -1})

// @op log
db.logs.insertOne({host_id: hostId, ts: new Date(at), level: "ERROR", service: "disk", message: "disk full"})

// @op recent_errors
db.logs.find({host_id: hostId, level: "ERROR"}).sort({ts: 1}).limit(50)

// @op host_page
db.hosts.findOne({_id: hostId})
