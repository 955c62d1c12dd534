// Setup: indexes for the inbox and the unread count.


// @op inbox
// userId's 20 newest notifications, newest first.


// @op unread
// How many of userId's notifications are unread.


// @op mention
// actorId mentions userId (type "mention", created_at new Date(at), read false, context "hello").

