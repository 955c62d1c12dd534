// Setup: current versions, full history, indexes.


// @op current
// The version of policyNo in force today (`today`, not the clock).


// @op amend
// Schedule the next version: premium 999, valid from new Date(at).


// @op as_of
// The version of policyNo in force at `when`.


// @op history
// Every version of policyNo, oldest first.

