//! Explain.
