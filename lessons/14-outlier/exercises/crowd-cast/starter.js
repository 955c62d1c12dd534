// Setup: at most 100 cast entries in any film document.


// @op film_page
// filmId with its first 20 cast entries.


// @op add_cast
// actor `extra` joins filmId's cast: {actor_id: extra, name: "Extra", billing: 1000 + i}.


// @op full_cast
// Every cast entry of filmId, as documents with actor_id.

