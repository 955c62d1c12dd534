// Casts stay embedded, as generated; cast_size is recorded so the workload
// can find the biggest production.
db.films.aggregate([{$set: {cast_size: {$size: "$cast"}}}, {$out: "films"}])
db.actors.drop()
