//! hub-content
