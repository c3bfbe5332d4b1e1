//! The `weft` command line (stub).
fn main() {}
