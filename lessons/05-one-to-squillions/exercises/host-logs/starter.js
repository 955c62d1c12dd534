// Setup: your design for hosts and their log lines.


// @op log
// hostId logs an ERROR line "disk full" at new Date(at).


// @op recent_errors
// hostId's 50 newest ERROR lines, newest first.


// @op host_page
// The host document of hostId.

