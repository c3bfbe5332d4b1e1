//! weft-reference
