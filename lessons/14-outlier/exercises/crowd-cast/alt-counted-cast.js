// An alternative correct design, written apart from the reference: each
// film keeps cast_count; a new entry first goes to the overflow if the film
// is already full, and is then pushed into the film only while it has
// room, so exactly one of the two writes takes it.
db.films.aggregate([
  {$unwind: {path: "$cast", includeArrayIndex: "pos"}},
  {$match: {pos: {$gte: 100}}},
  {$project: {_id: 0, film_id: "$_id", actor_id: "$cast.actor_id", name: "$cast.name", character: "$cast.character", billing: "$cast.billing", role: "$cast.role"}},
  {$merge: {into: "cast_overflow"}}
])
db.films.updateMany({}, [{$set: {cast_count: {$size: "$cast"}, cast: {$slice: ["$cast", 100]}}}])
db.cast_overflow.createIndex({film_id: 1, billing: 1})

// @op film_page
db.films.find({_id: filmId}, {title: 1, cast: {$slice: [0, 20]}})

// @op add_cast
db.films.aggregate([
  {$match: {_id: filmId, cast_count: {$gte: 100}}},
  {$project: {_id: 0, film_id: "$_id", actor_id: {$literal: extra}, name: "Extra", billing: {$literal: 1000 + i}}},
  {$merge: {into: "cast_overflow"}}
])
db.films.updateOne({_id: filmId, cast_count: {$lt: 100}}, {$push: {cast: {actor_id: extra, name: "Extra", billing: 1000 + i}}})
db.films.updateOne({_id: filmId}, {$inc: {cast_count: 1}})

// @op full_cast
db.cast_overflow.aggregate([
  {$match: {film_id: filmId}},
  {$project: {_id: 0, actor_id: 1}},
  {$unionWith: {coll: "films", pipeline: [{$match: {_id: filmId}}, {$unwind: "$cast"}, {$project: {_id: 0, actor_id: "$cast.actor_id"}}]}}
])
