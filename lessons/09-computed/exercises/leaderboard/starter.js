// Setup: give each user top_posts (five {post_id, likes}, most liked first).


// @op profile
// userId with top_posts.


// @op new_post
// userId publishes post pid with likes (i * 37) % 1000.

