// Mistake: the index leaves the level out, so the newest errors walk
// every recent line of the host until 50 errors turn up.
// Each line references its host; the host knows nothing of its lines.
db.logs.createIndex({host_id: 1, ts: -1})

// @op log
db.logs.insertOne({host_id: hostId, ts: new Date(at), level: "ERROR", service: "disk", message: "disk full"})

// @op recent_errors
db.logs.find({host_id: hostId, level: "ERROR"}).sort({ts: -1}).limit(50)

// @op host_page
db.hosts.findOne({_id: hostId})
