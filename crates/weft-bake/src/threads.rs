//! How many threads a bake runs on when it is not told: [`fitted_threads`].

use weft_core::Model;
use weft_core::colouring::BLOCK_PARTICLES;

/// The threads of a bake that asks for none ([`crate::BakeOptions::threads`] `None`): `1` when
/// the model has no work for threads to share, else `0`, rayon's default (`RAYON_NUM_THREADS`,
/// else one per logical CPU). The output is the same either way; only the time differs.
///
/// Threads share the solve of independent blocks of [`BLOCK_PARTICLES`] particles, the passes
/// of particle self-collision and the contact search of surface self-collision. A model that
/// fits in one block and has no self-collision gives a second thread nothing to do but wait at
/// the barriers between phases, and that costs more than it gains. Measured on a 2-core machine
/// (`weft bake examples/NAME.toml -j 1` against `-j 2`, ms per frame, medians of three
/// interleaved rounds): the flag (1,536 particles) 8.3 against 10.3, `drape_sphere` (625) 3.1
/// against 4.7, `sweep` (441) 3.3 against 5.1, `cape` (1,200, a mesh collider) 62 against 80;
/// but `pile` (1,872, self-collision) 68 against 49, and the 64² drop sheet of
/// `benches/blender` (surface self-collision, its first 12 frames) 578 against 442.
pub fn fitted_threads(model: &Model) -> usize {
    let blocks = model.particles().len().div_ceil(BLOCK_PARTICLES as usize);
    let shared = !model.self_collision().is_empty() || !model.surface_collision().is_empty();
    if blocks > 1 || shared { 0 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::limits::Limits;

    fn model(scene: &str) -> Model {
        let scene = weft_io::parse_scene(scene, std::path::Path::new("t.toml"), &Limits::default()).unwrap();
        scene.build_model().unwrap()
    }

    fn grid(n: u32, extra: &str) -> String {
        format!(
            "[simulation]\nfps = 30.0\nframes = 1\nsubsteps = 1\n[[cloth]]\nname = \"c\"\n\
             grid = {{ resolution = [{n}, {n}], size = [1.0, 1.0] }}\n{extra}\n"
        )
    }

    #[test]
    fn one_block_without_self_collision_runs_on_one_thread() {
        assert_eq!(fitted_threads(&model(&grid(64, ""))), 1, "4,096 particles: one block");
        assert_eq!(fitted_threads(&model(&grid(65, ""))), 0, "4,225 particles: two blocks");
        let pile = grid(16, "self_collision = true\nself_thickness = 0.07");
        assert_eq!(fitted_threads(&model(&pile)), 0, "self-collision shares its passes");
        let sheet = grid(16, "self_collision = \"triangles\"\nself_thickness = 0.01");
        assert_eq!(fitted_threads(&model(&sheet)), 0, "surface self-collision shares its search");
    }
}
