// An alternative correct design, written apart from the reference: the
// films stay whole, and one index holds every field the front page shows,
// in the order it sorts. The front page is answered from the index alone
// (a covered query) and never reads a film document, so its working set is
// a few index pages; the server keeps that copy in step on every write.
db.films.createIndex({rating: -1, _id: 1, title: 1, year: 1})

// @op listing
db.films.find({}, {_id: 1, title: 1, year: 1, rating: 1}).sort({rating: -1, _id: 1}).limit(20)

// @op film_page
db.films.findOne({_id: filmId})

// @op rate
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
