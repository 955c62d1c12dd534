// Setup: your design for the 65:25:8:2 mix.


// @op home
// 20 newest published posts, each with _id and comment_count.


// @op post_page
// postId with recent_comments: its 10 newest comments, newest first.


// @op comment
// authorId comments on postId (_id: commentId, created_at: new Date(at)).


// @op analytics
// {posts, likes, comments} over authorId's posts.


// @op post_count
// postId's comment count, as {comment_count}.
