// Setup: reshape `products` so one index serves any specification query.


// @op by_colour
// Products whose colour is `colour`.


// @op by_ram
// Products with at least `ramMin` GB of RAM.


// @op by_language
// Books in `language`.

