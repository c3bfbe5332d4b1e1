//! Promise: every committed fuzz input (the seed corpora in `fuzz/corpus/TARGET/` and the inputs
//! that once found a bug, in `fuzz/regressions/TARGET/`) runs cleanly through the same library
//! function libFuzzer runs, under plain `cargo test` on the stable toolchain.

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{} panicked", file.display());
            count += 1;
        }
    }
    assert!(count > 0, "no inputs for fuzz target {target}");
}

#[test]
fn scene_corpus() {
    replay("scene", weft::fuzzing::scene_text);
}
