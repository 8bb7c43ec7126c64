//! hub-model
