// Setup: build `history` (one bucket of at most 500 views per document)
// from `comments`, then create the indexes your reads need.


// @op view
// Record a view of postId by userId at new Date(at).


// @op latest
// The latest 1,000 views of userId, newest first, as {post_id, ts}.

