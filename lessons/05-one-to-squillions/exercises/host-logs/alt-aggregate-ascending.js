// An alternative correct design, written apart from the reference: the
// index keeps ts ascending (the read walks it backwards), the reads are
// aggregations, and a line is written with insertMany.
db.logs.createIndex({host_id: 1, level: 1, ts: 1})

// @op log
db.logs.insertMany([{host_id: hostId, level: "ERROR", ts: new Date(at), message: "disk full"}])

// @op recent_errors
db.logs.aggregate([
  {$match: {host_id: hostId, level: "ERROR"}},
  {$sort: {ts: -1}},
  {$limit: 50},
  {$project: {_id: 0, ts: 1, message: 1}}
])

// @op host_page
db.hosts.aggregate([{$match: {_id: hostId}}, {$project: {hostname: 1, ip: 1}}])
