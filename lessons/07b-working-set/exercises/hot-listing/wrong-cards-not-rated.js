// Mistake: the front page reads a small film_cards copy, but a new rating
// is written to films only, so the copy the front page reads goes stale.
db.films.aggregate([
  {$project: {title: 1, year: 1, rating: 1}},
  {$out: "film_cards"}
])
db.film_cards.createIndex({rating: -1, _id: 1})

// @op listing
db.film_cards.find().sort({rating: -1, _id: 1}).limit(20)

// @op film_page
db.films.findOne({_id: filmId})

// @op rate
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
