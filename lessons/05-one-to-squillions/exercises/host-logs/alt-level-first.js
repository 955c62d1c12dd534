// An alternative correct design, written apart from the reference: both
// equality fields lead the index in the other order, and the read asks
// only for what the page shows.
db.logs.createIndex({level: 1, host_id: 1, ts: -1}, {name: "errors_by_host"})

// @op log
db.logs.insertOne({ts: new Date(at), host_id: hostId, level: "ERROR", message: "disk full", service: "storage"})

// @op recent_errors
db.logs.find({level: "ERROR", host_id: hostId}, {_id: 0, ts: 1, message: 1}).sort({ts: -1}).limit(50)

// @op host_page
db.hosts.find({_id: hostId})
