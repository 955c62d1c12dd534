// Mistake: a subset where one-to-squillions needs none: "for the host
// page" the host keeps its 50 newest error lines, so every error rewrites
// and grows the host document.
db.logs.createIndex({host_id: 1, level: 1, ts: -1})

// @op log
db.logs.insertOne({host_id: hostId, ts: new Date(at), level: "ERROR", service: "disk", message: "disk full"})
db.hosts.updateOne({_id: hostId}, {$push: {recent_errors: {$each: [{ts: new Date(at), message: "disk full"}], $position: 0, $slice: 50}}})

// @op recent_errors
db.logs.find({host_id: hostId, level: "ERROR"}).sort({ts: -1}).limit(50)

// @op host_page
db.hosts.findOne({_id: hostId}, {hostname: 1, ip: 1})
