//! The integration tests of the `weft` package, one module per promise, built as one test binary:
//! forty binaries each linking the whole workspace made the test build most of `cargo test`'s time
//! on a fresh clone. Run one file's tests with `cargo test --test suite MODULE::` (for example
//! `cargo test --test suite resume::`). Each module's doc comment says what it promises.

mod adversarial;
mod bench_scenes;
mod bending;
mod bending_matches_reference;
mod cli_bad_input;
mod cli_bake;
mod cli_batch;
mod collider_cli;
mod collider_matches_reference;
mod colliders;
mod degeneracy;
mod fuzz_replay;
mod import_tools;
mod kinds_match_reference;
mod mesh_bad_input;
mod mesh_collider_matches_reference;
mod mesh_colliders;
mod mesh_load;
mod precision;
mod render_mesh;
mod report_cli;
mod resource_limits;
mod resume;
mod seed_example;
mod self_collision_bad_input;
mod self_collision_determinism;
mod self_collision_matches_reference;
mod self_collision_pile;
mod simd_matches_reference;
mod simd_matches_scalar;
mod slurm;
mod surface_collision;
mod tether_volume_wind_matches_reference;
mod tethers;
mod thread_determinism;
mod time_step_independence;
mod tolerance;
mod volume;
mod wedge_bad_input;
mod wind;
