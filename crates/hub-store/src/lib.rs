//! hub-store
