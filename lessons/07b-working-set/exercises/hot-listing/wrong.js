// Every film stays whole. An index serves the front page's sort and a
// projection trims what it returns, but each listed film's page, plot and
// cast included, is still read into the cache.
db.films.createIndex({rating: -1, _id: 1})

// @op listing
db.films.find({}, {title: 1, year: 1, rating: 1}).sort({rating: -1, _id: 1}).limit(20)

// @op film_page
db.films.findOne({_id: filmId})

// @op rate
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
