// An alternative correct design, written apart from the reference: the
// guard is the array's own size ($expr with $size), the overflow keeps a
// whole cast entry under `entry`, and the full cast is read in two steps.
db.films.aggregate([
  {$project: {film_id: "$_id", entry: {$slice: ["$cast", 100, 100000]}, _id: 0}},
  {$unwind: "$entry"},
  {$out: "cast_overflow"}
])
db.cast_overflow.createIndex({film_id: 1})
db.films.updateMany({"cast.100": {$exists: true}}, [{$set: {cast: {$slice: ["$cast", 100]}, has_overflow: true}}])

// @op film_page
db.films.aggregate([{$match: {_id: filmId}}, {$project: {title: 1, cast: {$slice: ["$cast", 20]}}}])

// @op add_cast
db.films.aggregate([
  {$match: {_id: filmId, $expr: {$gte: [{$size: "$cast"}, 100]}}},
  {$project: {_id: 0, film_id: "$_id", entry: {actor_id: {$literal: extra}, name: "Extra", billing: {$literal: 1000 + i}}}},
  {$merge: {into: "cast_overflow"}}
])
db.films.updateOne({_id: filmId, $expr: {$lt: [{$size: "$cast"}, 100]}}, {$push: {cast: {actor_id: extra, name: "Extra", billing: 1000 + i}}})

// @op full_cast
db.films.aggregate([
  {$match: {_id: filmId}},
  {$project: {_id: 0, cast: 1}},
  {$unwind: "$cast"},
  {$project: {actor_id: "$cast.actor_id"}},
  {$unionWith: {coll: "cast_overflow", pipeline: [{$match: {film_id: filmId}}, {$project: {_id: 0, actor_id: "$entry.actor_id"}}]}}
])
