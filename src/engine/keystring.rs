//! Index keys as byte strings whose binary order is mongod's BSON order.
