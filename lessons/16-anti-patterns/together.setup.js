// Films as generated: listing fields, plot and full cast in one document.
db.films.createIndex({genres: 1, rating: -1})
db.actors.drop()
