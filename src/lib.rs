//! weft: XPBD cloth solver and offline cloth baker (facade).

pub mod bench;
