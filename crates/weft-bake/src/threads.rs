//! How many threads a bake runs on when it is not told: [`fitted_threads`].

use weft_core::Model;
pub use weft_core::colouring::SHARED_SELF_COLLISION;
use weft_core::colouring::{self, BLOCK_PARTICLES};

/// The threads of a bake that asks for none ([`crate::BakeOptions::threads`] `None`): `1` when
/// the model has no work for threads to share, else `0`, rayon's default (`RAYON_NUM_THREADS`,
/// else one per logical CPU). The output is the same either way; only the time differs.
///
/// Threads share the solve of independent blocks of [`BLOCK_PARTICLES`] particles, the passes
/// of particle self-collision and the contact search of surface self-collision. A model that
/// fits in one block gives a second thread nothing to do but wait at the barriers between
/// phases, and that costs more than it gains, unless it has surface self-collision, or particle
/// self-collision over at least [`SHARED_SELF_COLLISION`] particles. Measured on a 2-core
/// machine (`weft bake SCENE -j 1` against `-j 2`, whole bakes, medians of three to seven
/// interleaved rounds): the flag (1,536 particles) 8.3 against 10.3 ms per frame,
/// `drape_sphere` (625) 3.1 against 4.7, `sweep` (441) 3.3 against 5.1, `cape` (1,200, a mesh
/// collider) 62 against 80; with particle self-collision the flag at 3.5 cm 1.14 against
/// 1.39 s and `pile` (1,872) 0.653 s either way (twice the CPU on two), but 48² and 64² sheets
/// (2,304 and 4,096 particles, 2 cm) 0.58 against 0.51 s and 1.29 against 1.01 s; with surface
/// self-collision the 64² drop sheet of `benches/blender` (its first 12 frames) 578 against
/// 442 ms per frame.
pub fn fitted_threads(model: &Model) -> usize {
    let particles = model.particles().len();
    let blocks = particles.div_ceil(BLOCK_PARTICLES as usize);
    let (particle_contacts, surface_contacts) =
        (!model.self_collision().is_empty(), !model.surface_collision().is_empty());
    let shared = colouring::shares_contacts(particles, particle_contacts, surface_contacts);
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
        assert_eq!(fitted_threads(&model(&pile)), 1, "256 particles' self-collision: too little to share");
        let sheet = grid(46, "self_collision = true\nself_thickness = 0.03");
        assert_eq!(fitted_threads(&model(&sheet)), 0, "2,116 particles: over half a block, shared");
        let sheet = grid(45, "self_collision = true\nself_thickness = 0.03");
        assert_eq!(fitted_threads(&model(&sheet)), 1, "2,025 particles: under half a block");
        let sheet = grid(16, "self_collision = \"triangles\"\nself_thickness = 0.01");
        assert_eq!(fitted_threads(&model(&sheet)), 0, "surface self-collision shares its search");
    }
}
