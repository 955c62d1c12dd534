// Setup: collections, validators and indexes.


// @op follow
// a follows b.


// @op unfollow
// a unfollows b.


// @op post
// a publishes a post.


// @op counts
// The users userId, otherId and celebId with their counts.


// @op feed
// userId's home feed: 20 latest posts of the accounts userId follows.

