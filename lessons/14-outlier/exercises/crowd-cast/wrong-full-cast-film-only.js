// Mistake: the overflow is written, but the full cast reads the film
// document only: every entry past the 100th is missing from the answer.
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
db.films.updateOne({_id: filmId, "cast.99": {$exists: false}}, {$push: {cast: {actor_id: extra, name: "Extra", billing: 1000 + i}}})
db.films.aggregate([
  {$match: {_id: filmId, "cast.actor_id": {$ne: extra}}},
  {$project: {_id: 0, film_id: "$_id", actor_id: {$literal: extra}, name: "Extra", billing: {$literal: 1000 + i}}},
  {$merge: {into: "cast_overflow"}}
])

// @op full_cast
db.films.aggregate([{$match: {_id: filmId}}, {$unwind: "$cast"}, {$replaceWith: "$cast"}])
