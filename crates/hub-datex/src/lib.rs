//! hub-datex
