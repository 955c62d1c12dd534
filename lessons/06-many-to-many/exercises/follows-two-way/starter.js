// Setup: your design for follows. Keep the `users` collection.


// @op follow
// fan follows celebId.


// @op following
// Whom userId follows, as documents {followee_id}.

