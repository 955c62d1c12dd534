// A host whose crash dumps (1 MiB each) are all pushed into one array.
db.hosts.insertOne({_id: "dump-host", hostname: "dump-host", datacenter: "lab", events: []})

// Build a 1 MiB string: 16 characters doubled 16 times.
let chunk = "0123456789abcdef"
for (const i of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]) {
  chunk = chunk + chunk
}

// Fifteen dumps fit: the document ends just over 15 MiB.
for (const i of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]) {
  db.hosts.updateOne({_id: "dump-host"}, {$push: {events: {seq: i, dump: chunk}}})
}
