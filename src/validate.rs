//! `weft validate`: what a scene turns into, before any time step is taken.
//!
//! [`describe`] reports the settings, each cloth, the particles (and how many are pinned), the
//! distance constraints per kind, those left out because both their particles are pinned, the
//! colours of the parallel solve and their sizes, the constraints solved serially, the SIMD batches
//! and how full their lanes are, the work of a whole bake, and the approximate memory of the model
//! and of a bake at its peak ([`weft_bake::memory`]).

use std::fmt::Write as _;

use weft_bake::memory::{model_bytes, peak_bytes};
use weft_bake::stats::Quality;
use weft_core::Model;
use weft_core::kinds::KindId;
use weft_core::lanes::LANES;
use weft_core::self_collision::ThinParticleContacts;

/// The variants of a scene's `[wedge]` (which `weft validate` reads and builds every one of), one
/// line each: index and name (the folder `weft bake` writes it to). The model described above
/// them is variant 0's.
pub fn wedge_list(variants: &[weft_io::Variant]) -> String {
    let mut s =
        format!("wedge:          {} variants, each valid (the model above is variant 0)\n", variants.len());
    for v in variants {
        let _ = writeln!(s, "  {:>5}  {}", v.index, v.name);
    }
    s
}

/// A byte count for people: `512 B`, `1.5 KiB`, `3.2 MiB`, `1.1 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `value` with six decimals, trailing zeros removed: `0.1`, `0.004167`.
fn trimmed(value: f64) -> String {
    let s = format!("{value:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" { "0".to_string() } else { s.to_string() }
}

/// The report of `weft validate` for a built model, one item per line.
///
/// ```
/// use std::path::Path;
/// let text = "[simulation]\nfps = 24\nframes = 2\n[[cloth]]\nname = \"sheet\"\n\
///             grid = { resolution = [4, 3], size = [1.5, 1.0] }\npin_corners = [\"top-left\"]\n";
/// let scene = weft::io::parse_scene(text, Path::new("s.toml"), &Default::default()).unwrap();
/// let report = weft::validate::describe(&scene.build_model().unwrap());
/// assert!(report.contains("particles:      12 (1 pinned)"), "{report}");
/// assert!(report.contains("stretch 17, shear 12"), "{report}");
/// ```
pub fn describe(model: &Model) -> String {
    let mut s = String::new();
    simulation(&mut s, model);
    cloths(&mut s, model);
    colliders(&mut s, model);
    contacts(&mut s, model);
    constraints(&mut s, model);
    work_and_memory(&mut s, model);
    s
}

/// The `simulation:` line: rate, frames, substeps (or their range baking to a tolerance),
/// iterations, gravity, damping.
fn simulation(s: &mut String, model: &Model) {
    let settings = model.settings();
    let h = settings.time_step().h64;
    let g = settings.gravity;
    let substeps = match settings.tolerance {
        None => format!("substeps {} (h = {} s)", settings.substeps, trimmed(h)),
        Some(t) => format!(
            "substeps {} to {} chosen per frame to max_strain {} (h = {} to {} s)",
            t.min_substeps,
            t.max_substeps,
            t.max_strain,
            trimmed(1.0 / (settings.fps * t.min_substeps as f64)),
            trimmed(1.0 / (settings.fps * t.max_substeps as f64))
        ),
    };
    let _ = writeln!(
        s,
        "simulation:     fps {}, frames {}, {substeps}, iterations {}, \
         gravity [{}, {}, {}] m/s², velocity damping {} 1/s",
        settings.fps, settings.frames, settings.iterations, g[0], g[1], g[2], settings.velocity_damping
    );
}

/// A `cloth:` line per cloth, and a `render mesh:` line for one with a render mesh.
fn cloths(s: &mut String, model: &Model) {
    for cloth in model.cloths() {
        let pinned =
            model.particles().inv_mass()[cloth.particles.clone()].iter().filter(|&&w| w == 0.0).count();
        let _ = writeln!(
            s,
            "cloth:          '{}', {} particles ({} pinned), {} triangles",
            cloth.name,
            cloth.particles.len(),
            pinned,
            cloth.triangles.len()
        );
        if let Some(r) = &cloth.render {
            let _ = writeln!(
                s,
                "render mesh:    '{}', {} vertices ({:.1} × the particles), {} faces, reach {} m, largest offset {} m{}",
                cloth.name,
                r.binding.len(),
                r.binding.len() as f64 / cloth.particles.len().max(1) as f64,
                r.polygons.len(),
                trimmed(r.binding.reach()),
                trimmed(r.binding.largest_offset()),
                if r.cache_proxy {
                    format!(", particles cached as '{}{}'", cloth.name, weft_core::binding::PROXY_SUFFIX)
                } else {
                    String::new()
                }
            );
        }
    }
}

/// A `collider:` line per collider and mesh collider, and the pins that follow something.
fn colliders(s: &mut String, model: &Model) {
    let report = model.report();
    for c in model.colliders() {
        let motion =
            if c.is_animated() { format!("animated by {} keys", c.keys.len()) } else { "static".into() };
        let _ = writeln!(
            s,
            "collider:       '{}', {}, {motion}, thickness {} m, friction {} static / {} kinetic",
            c.name,
            c.shape.name(),
            c.thickness,
            c.friction.static_coefficient,
            c.friction.kinetic_coefficient
        );
    }
    for m in model.mesh_colliders() {
        let motion = match (m.frames.len(), m.keys.len()) {
            (1, 1) => "static".to_string(),
            (f, k) => format!("{f} frames every {} s, {k} rigid keys", m.frame_interval),
        };
        let _ = writeln!(
            s,
            "collider:       '{}', mesh of {} triangles over {} vertices, {motion}, thickness {} m, friction {} static / {} kinetic",
            m.name,
            m.triangles.len(),
            m.vertex_count(),
            m.thickness,
            m.friction.static_coefficient,
            m.friction.kinetic_coefficient
        );
    }
    if report.following_pins > 0 {
        let _ = writeln!(
            s,
            "following pins: {} (they follow a keyframed path or a collider)",
            report.following_pins
        );
    }
}

/// Particle self-collision, with a warning for each cloth whose thickness cannot hold a layer
/// off it ([`ThinParticleContacts`]).
fn particle_contacts(s: &mut String, model: &Model) {
    let sc = model.self_collision();
    if sc.is_empty() {
        return;
    }
    let (min, max) = (sc.min_thickness(), sc.max_thickness());
    let _ = writeln!(s, "self-collision: particles: {} taking part, {min}–{max} m apart", sc.members().len());
    for (name, thin) in ThinParticleContacts::of_model(model) {
        let _ = writeln!(s, "  warning: cloth \"{name}\": {thin}");
    }
}

/// The surface self-collision, and the triangles that cross at the start.
fn contacts(s: &mut String, model: &Model) {
    particle_contacts(s, model);
    let sc = model.surface_collision();
    if !sc.is_empty() {
        let _ = writeln!(
            s,
            "self-collision: triangles: {} vertices, {} triangles, {} edges, {} m thick at most, guard gap {} m",
            sc.vertices().len(),
            sc.triangles().len(),
            sc.edges().len(),
            sc.max_thickness(),
            sc.guard_gap()
        );
    }
    let (crossing, _) = Quality::new(model).measure(model);
    let _ = writeln!(
        s,
        "intersecting:   {crossing} pairs of triangles cross at the start{}",
        if crossing > 0 { " (self-collision does not undo them)" } else { "" }
    );
}

/// The particles, the constraints of each kind, those dropped at build, and how each batched
/// kind is laid out for the parallel solve.
fn constraints(s: &mut String, model: &Model) {
    let report = model.report();
    let _ = writeln!(s, "particles:      {} ({} pinned)", report.particles, report.pinned);
    let kinds: Vec<String> = report
        .sets
        .iter()
        .map(|(kind, set)| match kind {
            KindId::Distance => {
                format!("{} distance (stretch {}, shear {})", set.constraints, report.stretch, report.shear)
            }
            kind => format!("{} {}", set.constraints, kind.info().name),
        })
        .collect();
    let _ = writeln!(
        s,
        "constraints:    {}, {} volume, {} triangles in the wind",
        kinds.join(", "),
        report.volumes,
        report.aero_triangles
    );
    let _ = writeln!(s, "dropped:        {} (both ends pinned: they can never move)", report.dropped_pinned);
    let _ = writeln!(
        s,
        "solve:          kind       constraints  blocks  colours/block  across blocks (strands, colours)  serial  SIMD batches  lane fill"
    );
    for (kind, set) in report.sets.iter() {
        let _ = writeln!(
            s,
            "                {:<9} {:>12} {:>7} {:>14} {:>22} ({:>3}, {:>3}) {:>7} {:>13} {:>10}",
            kind.info().name,
            set.constraints,
            set.blocks,
            set.block_colours,
            set.across(),
            set.strands.len(),
            set.boundary_colours.len(),
            set.serial,
            set.batches,
            if set.constraints == 0 { "-".to_string() } else { format!("{:.1} %", set.fill * 100.0) }
        );
    }
    let _ = writeln!(
        s,
        "                (blocks of up to {} particles are solved in parallel, each colour by colour; \
         constraints across blocks follow: each strand colour by colour, in parallel, then the \
         boundary colours one by one; {} lanes per SIMD batch)",
        weft_core::colouring::BLOCK_PARTICLES,
        LANES
    );
}

/// The work of a whole bake (time steps, constraint projections) and its memory.
fn work_and_memory(s: &mut String, model: &Model) {
    let (settings, report) = (model.settings(), model.report());
    // With a strain tolerance: the least work (every frame at min_substeps); at most
    // frames × max_substeps.
    let steps = settings.frames as u64 * settings.substeps as u64;
    let batched: usize = report.sets.iter().map(|(_, set)| set.constraints).sum();
    let projections = (batched + report.volumes) as u128 * settings.iterations as u128 * steps as u128;
    let at_least = if settings.tolerance.is_some() { "at least " } else { "" };
    let _ = writeln!(s, "work:           {at_least}{steps} time steps, {projections} constraint projections");
    // One PC2 cache per cloth, as `weft bake` writes by default.
    let peak = peak_bytes(model, 1);
    let _ = writeln!(
        s,
        "memory:         about {} for the model, {} at the peak of a bake to PC2 ({} bytes per particle)",
        human_bytes(model_bytes(model)),
        human_bytes(peak),
        peak / (model.particles().len() as u64).max(1)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_decimals() {
        assert_eq!(trimmed(0.1), "0.1");
        assert_eq!(trimmed(1.0 / 240.0), "0.004167");
        assert_eq!(trimmed(2.0), "2");
        assert_eq!(trimmed(1e-9), "0");
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 << 20), "5.0 MiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }

    /// A 1 m sheet of `n`² particles with particle self-collision `thickness` apart.
    fn sheet(n: u32, thickness: f32) -> Model {
        let text = format!(
            "[simulation]\nfps = 30.0\nframes = 1\n[[cloth]]\nname = \"sheet\"\n\
             grid = {{ resolution = [{n}, {n}], size = [1.0, 1.0] }}\nself_collision = true\n\
             self_thickness = {thickness}\n"
        );
        let limits = weft_core::limits::Limits::default();
        weft_io::parse_scene(&text, std::path::Path::new("t.toml"), &limits).unwrap().build_model().unwrap()
    }

    #[test]
    fn particle_contacts_thinner_than_the_spacing_are_warned_of() {
        // 21 particles a side: 5 cm apart, 6 cm on the diagonals.
        let thin = describe(&sheet(21, 0.004));
        assert!(thin.contains("self-collision: particles: 441 taking part"), "{thin}");
        assert!(
            thin.contains("warning: cloth \"sheet\": self_thickness 0.004 m is under its vertex spacing"),
            "{thin}"
        );
        assert!(thin.contains("self_collision = \"triangles\""), "{thin}");
        let thick = describe(&sheet(21, 0.05));
        assert!(thick.contains("self-collision: particles") && !thick.contains("warning"), "{thick}");
    }
}
