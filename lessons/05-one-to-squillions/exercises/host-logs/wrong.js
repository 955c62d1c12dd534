// The host lists its lines (child references), lines stay in `logs`.
db.logs.aggregate([
  {$group: {_id: "$host_id", log_ids: {$push: "$_id"}}},
  {$merge: {into: "hosts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.logs.createIndex({host_id: 1, level: 1, ts: -1})

// @op log
db.logs.insertOne({_id: at, host_id: hostId, ts: new Date(at), level: "ERROR", service: "disk", message: "disk full"})
db.hosts.updateOne({_id: hostId}, {$push: {log_ids: at}})

// @op recent_errors
db.logs.find({host_id: hostId, level: "ERROR"}).sort({ts: -1}).limit(50)

// @op host_page
db.hosts.findOne({_id: hostId}, {hostname: 1, ip: 1})
