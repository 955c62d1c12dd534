//! Indexes: ordered sets of keys maintained on every write.
