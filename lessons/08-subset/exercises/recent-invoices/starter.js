// Setup: your design for customers and invoices.


// @op account
// customerId with recent_invoices: the five newest, newest first.


// @op history
// Every invoice of customerId, newest first.


// @op new_invoice
// A new invoice: number "INV-NEW-" + n, issued_at new Date(at), amount 10.

