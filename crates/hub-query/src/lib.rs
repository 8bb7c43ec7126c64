//! hub-query
