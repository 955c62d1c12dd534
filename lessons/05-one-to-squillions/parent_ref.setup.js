// Log lines already carry host_id. Count them per host (used to pick the
// busiest host) and index the way the error view reads.
db.logs.aggregate([
  {$group: {_id: "$host_id", log_count: {$sum: 1}}},
  {$merge: {into: "hosts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.logs.createIndex({host_id: 1, level: 1, ts: -1})
