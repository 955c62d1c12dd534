// Setup: parent_id is there already. Add what the reads need.


// @op chain
// The ancestors of nodeId, root first.


// @op reply
// A reply with _id replyId under nodeId.


// @op descendants
// Every descendant of nodeId, at any depth.

