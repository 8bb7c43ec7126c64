//! hub-demo
