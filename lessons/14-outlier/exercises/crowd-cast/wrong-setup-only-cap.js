// Mistake: the seeded outliers are split in setup, but a new entry is
// always pushed into the film: the cap holds on the first day only.
db.films.aggregate([
  {$project: {_id: 0, film_id: "$_id", c: {$slice: ["$cast", 100, 1000000]}}},
  {$unwind: "$c"},
  {$replaceWith: {$mergeObjects: ["$c", {film_id: "$film_id"}]}},
  {$out: "cast_overflow"}
])
db.films.updateMany({}, [{$set: {has_overflow: {$gt: [{$size: "$cast"}, 100]}, cast: {$slice: ["$cast", 100]}}}])
db.cast_overflow.createIndex({film_id: 1})

// @op film_page
db.films.findOne({_id: filmId}, {title: 1, cast: {$slice: 20}})

// @op add_cast
db.films.updateOne({_id: filmId}, {$push: {cast: {actor_id: extra, name: "Extra", billing: 1000 + i}}})

// @op full_cast
db.films.aggregate([
  {$match: {_id: filmId}},
  {$unwind: "$cast"},
  {$replaceWith: "$cast"},
  {$unionWith: {coll: "cast_overflow", pipeline: [{$match: {film_id: filmId}}]}}
])
