// Films with more than 100 cast entries are outliers. The film keeps its
// first 100 entries and is flagged; the rest move to overflow buckets of at
// most 100 entries each, numbered by page, so that no overflow document
// grows without bound either.
db.films.aggregate([
  {$match: {$expr: {$gt: [{$size: "$cast"}, 100]}}},
  {$unwind: {path: "$cast", includeArrayIndex: "i"}},
  {$match: {i: {$gte: 100}}},
  {$sort: {_id: 1, i: 1}},
  {$group: {
    _id: {film_id: "$_id", page: {$floor: {$divide: [{$subtract: ["$i", 100]}, 100]}}},
    n: {$sum: 1},
    cast: {$push: "$cast"}
  }},
  {$project: {_id: 0, film_id: "$_id.film_id", page: "$_id.page", n: 1, cast: 1}},
  {$out: "cast_overflow"}
])
// Then every film, in place: a pipeline update computes the flag and the
// size from the full cast before trimming it.
db.films.updateMany({}, [
  {$set: {cast_size: {$size: "$cast"}, has_overflow: {$gt: [{$size: "$cast"}, 100]}, cast: {$slice: ["$cast", 100]}}}
])
db.cast_overflow.createIndex({film_id: 1, page: 1})
db.actors.drop()
