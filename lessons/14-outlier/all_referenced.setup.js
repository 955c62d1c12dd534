// One document per cast entry, pointing at its film.
db.films.aggregate([
  {$unwind: "$cast"},
  {$project: {_id: 0, film_id: "$_id", actor_id: "$cast.actor_id", name: "$cast.name", character: "$cast.character", billing: "$cast.billing", role: "$cast.role"}},
  {$out: "cast"}
])
db.films.aggregate([{$set: {cast_size: {$size: "$cast"}}}, {$unset: ["cast"]}, {$out: "films"}])
db.cast.createIndex({film_id: 1, billing: 1})
db.actors.drop()
