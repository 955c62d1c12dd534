// An alternative correct design, written apart from the reference: films
// stays whole for the film page, and the front page reads film_cards, a
// small copy of the four fields it shows. A new rating is written to both.
db.films.aggregate([
  {$project: {title: 1, year: 1, rating: 1}},
  {$out: "film_cards"}
])
db.film_cards.createIndex({rating: -1, _id: 1})

// @op listing
db.film_cards.find().sort({rating: -1, _id: 1}).limit(20)

// @op film_page
db.films.find({_id: filmId})

// @op rate
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
db.film_cards.updateOne({_id: ratedId}, {$set: {rating: stars}})
