// The host lists the ids of all its log lines, oldest first; the lines no
// longer know their host.
db.logs.aggregate([
  {$sort: {ts: 1}},
  {$group: {_id: "$host_id", log_count: {$sum: 1}, log_ids: {$push: "$_id"}}},
  {$merge: {into: "hosts", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.logs.aggregate([
  {$unset: ["host_id", "hostname"]},
  {$out: "logs"}
])
