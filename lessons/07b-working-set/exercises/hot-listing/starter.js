// Setup: the films as loaded, each carrying its plot and its full cast.
// Reshape them here and create the indexes your reads need; the statements
// below work on the data as loaded, but the front page reads too much.


// @op listing
// The 20 highest-rated films with _id, title, year and rating; highest rating first, ties by _id ascending.
db.films.find({}, {title: 1, year: 1, rating: 1}).sort({rating: -1, _id: 1}).limit(20)

// @op film_page
// filmId as one document: its fields, its plot and `cast`, the full cast in billing order.
db.films.findOne({_id: filmId})

// @op rate
// Film ratedId now rates stars.
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
