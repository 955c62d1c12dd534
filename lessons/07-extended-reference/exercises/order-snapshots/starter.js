// Setup: shape `orders` for the order page (the seeded orders are a start).


// @op page
// The order page for orderId.


// @op page_after
// The same page, after the catalogue's price rise.

