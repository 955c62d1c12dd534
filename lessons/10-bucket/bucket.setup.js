// Readings arrive once a minute, so 200 consecutive minutes of one sensor
// make one bucket. Each bucket carries its computed summary: count, total,
// min and max, and the time span it covers (first, last).
db.readings.aggregate([
  {$sort: {sensor_id: 1, ts: 1}},
  {$group: {
    _id: {sensor_id: "$sensor_id", b: {$floor: {$divide: [{$subtract: ["$ts", ISODate("2026-01-01T00:00:00Z")]}, 12000000]}}},
    sensor_id: {$first: "$sensor_id"},
    // The bucket's key: the start of its 200-minute window.
    start: {$min: {$add: [ISODate("2026-01-01T00:00:00Z"), {$multiply: [{$floor: {$divide: [{$subtract: ["$ts", ISODate("2026-01-01T00:00:00Z")]}, 12000000]}}, 12000000]}]}},
    first: {$min: "$ts"},
    last: {$max: "$ts"},
    count: {$sum: 1},
    total: {$sum: "$value"},
    min: {$min: "$value"},
    max: {$max: "$value"},
    readings: {$push: {ts: "$ts", v: "$value"}}
  }},
  {$project: {_id: 0, sensor_id: 1, start: 1, first: 1, last: 1, count: 1, total: 1, min: 1, max: 1, readings: 1}},
  {$out: "buckets"}
])
db.readings.drop()
// One index serves reads and writes. A read for [t1, t2) wants the buckets
// whose start lies in [window start of t1, t2): both ends bounded. A new
// reading goes to the bucket of its own window: sensor and window start.
db.buckets.createIndex({sensor_id: 1, start: 1})
