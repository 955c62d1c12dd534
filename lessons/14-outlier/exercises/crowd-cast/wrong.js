// Every cast entry stays embedded, whatever the film.

// @op film_page
db.films.findOne({_id: filmId}, {title: 1, cast: {$slice: 20}})

// @op add_cast
db.films.updateOne({_id: filmId}, {$push: {cast: {actor_id: extra, name: "Extra", billing: 1000 + i}}})

// @op full_cast
db.films.aggregate([{$match: {_id: filmId}}, {$unwind: "$cast"}, {$replaceWith: "$cast"}])
