// The same host, its dumps in their own collection pointing back with host_id.
db.hosts.insertOne({_id: "dump-host", hostname: "dump-host", datacenter: "lab"})
db.events.createIndex({host_id: 1, seq: -1})

let chunk = "0123456789abcdef"
for (const i of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]) {
  chunk = chunk + chunk
}

for (const i of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]) {
  db.events.insertOne({host_id: "dump-host", seq: i, dump: chunk})
}
