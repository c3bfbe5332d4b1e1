//! Writes `examples/walk/body.obj` (a character: a torso with a head, and two arms) and
//! `examples/walk/body.pc2` (it lowering its arms and walking), the animated mesh colliders of
//! `examples/walk.toml`, which dresses the character in the T-shirt of `examples/garment.obj`:
//!
//! ```sh
//! cargo run --example make_walk               # into examples/walk/ (or give another folder)
//! cargo run --release -- bake examples/walk.toml --out out/walk --format pc2,usd,obj
//! ```
//!
//! **The body** (m, y up, facing +z) is three closed surfaces, one OBJ object each, every
//! triangle wound counter-clockwise seen from outside:
//! * `torso`: a surface of revolution with elliptical cross-sections from the hips (0.70 m) up
//!   the chest and the shoulders (0.39 m across) to the neck and the head (1.83 m);
//! * `left_arm` (+x) and `right_arm` (−x): a tube from the shoulder joint, just inside the
//!   torso at 1.395 m, along the upper arm (0.29 m, 4.8 → 4.0 cm radius) and the forearm (0.26 m,
//!   3.8 → 3.0 cm), rounded at both ends. At the elbow the tube bends along a circular arc of
//!   8 cm, so it stays a clean tube at any bend up to 90°.
//!
//! Frame 0, the OBJ file's pose, is a T-pose: the arms straight out along ±x, where the shirt's
//! sleeves are, and clear of every vertex of the shirt by more than [`CLEARANCE`] (checked
//! against `examples/garment.obj` when it is there).
//!
//! **The motion** (`FRAMES` frames at `FPS`, 3 s): the T-pose holds while the shirt settles on
//! the shoulders; from [`LOWER`]`.0` the arms come down to [`ARM_DOWN`] from the sides over
//! [`LOWER`]`.1`, the elbows bending to [`ELBOW_REST`]; from [`WALK`]`.0` the character sets off
//! along +z, up to [`SPEED`] over [`WALK`]`.1`, and walks: it bobs twice per stride, rolls, twists
//! its shoulders against its hips (the twist grows with height), and swings each arm
//! [`SWING`] forward and back with its shoulder, the elbow bending up to [`ELBOW_REST`] +
//! [`ELBOW_SWING`] as the arm comes forward. The arms move rigidly with the shoulders. The PC2
//! cache has one point per OBJ vertex, in file order.
//!
//! The output depends on nothing but this file: it is byte-for-byte the same on every run.

use std::f64::consts::{FRAC_PI_2, PI, TAU};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Frames of the animation: frame `k` at `k / FPS` s.
const FRAMES: usize = 91;
/// Frames per second of the animation.
const FPS: f64 = 30.0;

/// The arms come down: from this time, for this long (s).
const LOWER: (f64, f64) = (0.4, 0.8);
/// The walk starts: from this time, getting up to speed over this long (s).
const WALK: (f64, f64) = (0.6, 0.6);
/// Walking speed once under way, m/s.
const SPEED: f64 = 0.9;
/// Strides per second (one roll, one twist and one arm swing each; two bobs).
const STRIDE_HZ: f64 = 0.9;
/// Bob amplitude (m), roll amplitude (rad), shoulder twist amplitude (rad).
const BOB: f64 = 0.02;
const ROLL: f64 = 3.0 * PI / 180.0;
const TWIST: f64 = 8.0 * PI / 180.0;
/// The arms' angle from the sides once lowered (rad; a T-pose is 90°).
const ARM_DOWN: f64 = 30.0 * PI / 180.0;
/// Amplitude of an arm's swing forward and back (rad).
const SWING: f64 = 25.0 * PI / 180.0;
/// Elbow bend once the arms are down (rad), and what the swing adds at its most forward (rad).
const ELBOW_REST: f64 = 15.0 * PI / 180.0;
const ELBOW_SWING: f64 = 40.0 * PI / 180.0;

/// Heights of the hips' bottom and the shoulders, m (the twist grows from 0 to 1 between them).
const HIP_Y: f64 = 0.8;
const SHOULDER_Y: f64 = 1.42;

/// The torso's rings from bottom to top: `(height m, half-width along x m, half-depth along z m)`.
/// The poles are at [`TORSO_ENDS`].
const TORSO: [(f64, f64, f64); 16] = [
    (0.72, 0.150, 0.065), // rounding into the bottom
    (0.80, 0.185, 0.078), // hips
    (0.95, 0.160, 0.068), // waist
    (1.10, 0.170, 0.074),
    (1.25, 0.190, 0.076), // chest
    (1.36, 0.195, 0.072),
    (1.42, 0.190, 0.062), // shoulders
    (1.455, 0.165, 0.048),
    (1.475, 0.120, 0.040),
    (1.49, 0.070, 0.040),
    (1.50, 0.050, 0.042), // neck
    (1.56, 0.048, 0.045),
    (1.61, 0.070, 0.080), // jaw
    (1.67, 0.085, 0.095), // head
    (1.75, 0.080, 0.090),
    (1.81, 0.050, 0.055),
];
/// Heights of the torso's bottom and top poles, m.
const TORSO_ENDS: (f64, f64) = (0.70, 1.83);
/// Vertices around each ring of the torso, and rings between two rows of [`TORSO`] (counting
/// the first).
const TORSO_AROUND: usize = 32;
const TORSO_SPLIT: usize = 2;

/// The left shoulder joint in the torso's rest frame, m (the right one is its mirror image).
const JOINT: [f64; 3] = [0.18, 1.395, 0.0];
/// Upper arm and forearm lengths (m), and the half-length of the elbow's arc (m).
const UPPER: f64 = 0.29;
const FOREARM: f64 = 0.26;
const ELBOW_HALF: f64 = 0.04;
/// Radii (m) at the shoulder, the elbow and the wrist.
const RADII: [f64; 3] = [0.048, 0.040, 0.030];
/// Vertices around each ring of an arm, rings along it (ends excluded), rings in each rounded end.
const ARM_AROUND: usize = 16;
const ARM_RINGS: usize = 24;
const ARM_CAP: usize = 3;

/// Least distance between the shirt's vertices and the body at frame 0, m.
const CLEARANCE: f64 = 0.012;

type V = [f64; 3];

fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Where the body is in its motion at one time.
struct Pose {
    /// Distance walked along +z, m.
    along: f64,
    /// Up-and-down bob (m), roll about +z at the hips (rad), twist about +y at the shoulders (rad).
    bob: f64,
    roll: f64,
    twist: f64,
    /// Each arm's angle from the side (rad), forward swing (rad) and elbow bend (rad): left, right.
    abduction: f64,
    swing: [f64; 2],
    elbow: [f64; 2],
}

/// The pose at time `t` (s).
fn pose(t: f64) -> Pose {
    let lower = smoothstep((t - LOWER.0) / LOWER.1);
    let x = ((t - WALK.0) / WALK.1).max(0.0);
    // The integral of the speed, SPEED · smoothstep, in closed form.
    let along = SPEED * WALK.1 * if x < 1.0 { x.powi(3) - x.powi(4) / 2.0 } else { x - 0.5 };
    let gait = smoothstep(x);
    let phase = TAU * STRIDE_HZ * (t - WALK.0).max(0.0);
    // A positive twist turns the left (+x) shoulder back; its arm swings back with it.
    let forward = [-phase.sin(), phase.sin()];
    Pose {
        along,
        bob: BOB * gait * (1.0 - (2.0 * phase).cos()) / 2.0,
        roll: ROLL * gait * phase.sin(),
        twist: TWIST * gait * phase.sin(),
        abduction: FRAC_PI_2 - (FRAC_PI_2 - ARM_DOWN) * lower,
        swing: forward.map(|f| SWING * gait * f),
        elbow: forward.map(|f| ELBOW_REST * lower + ELBOW_SWING * gait * (1.0 + f) / 2.0),
    }
}

/// A point of the torso's rest frame, `up` of the way from the hips to the shoulders (0 to 1),
/// carried by `pose` into the world.
fn on_body(v: V, up: f64, pose: &Pose) -> V {
    let (s, c) = (pose.twist * up).sin_cos();
    let v = [c * v[0] + s * v[2], v[1], -s * v[0] + c * v[2]];
    let (s, c) = pose.roll.sin_cos();
    let (x, y) = (v[0], v[1] - HIP_Y);
    [c * x - s * y, HIP_Y + s * x + c * y + pose.bob, v[2] + pose.along]
}

/// How far up the twist a height is: 0 at the hips, 1 at the shoulders.
fn up(y: f64) -> f64 {
    ((y - HIP_Y) / (SHOULDER_Y - HIP_Y)).clamp(0.0, 1.0)
}

/// The torso's rings at rest, bottom to top, each `(height, half-width, half-depth)`.
fn torso_rings() -> Vec<(f64, f64, f64)> {
    let mut rows = Vec::new();
    for w in TORSO.windows(2) {
        for k in 0..TORSO_SPLIT {
            let t = k as f64 / TORSO_SPLIT as f64;
            rows.push((
                w[0].0 + t * (w[1].0 - w[0].0),
                w[0].1 + t * (w[1].1 - w[0].1),
                w[0].2 + t * (w[1].2 - w[0].2),
            ));
        }
    }
    rows.push(TORSO[TORSO.len() - 1]);
    rows
}

/// The torso's rest vertices: the bottom pole, the rings (each from +x turning towards −z, so
/// counter-clockwise seen from above), the top pole.
fn torso_rest() -> Vec<V> {
    let mut v = vec![[0.0, TORSO_ENDS.0, 0.0]];
    for (y, a, b) in torso_rings() {
        for k in 0..TORSO_AROUND {
            let angle = TAU * k as f64 / TORSO_AROUND as f64;
            v.push([a * angle.cos(), y, -b * angle.sin()]);
        }
    }
    v.push([0.0, TORSO_ENDS.1, 0.0]);
    v
}

/// Triangles (0-based) of a closed tube of `rings` rings of `around` vertices between a first
/// pole (vertex 0) and a last one, each ring turning counter-clockwise about the direction from
/// the first pole to the last: every triangle's normal points out.
fn tube_triangles(rings: usize, around: usize) -> Vec<[usize; 3]> {
    let ring = |r: usize, k: usize| 1 + r * around + k % around;
    let last = 1 + rings * around;
    let mut t: Vec<[usize; 3]> = (0..around).map(|k| [0, ring(0, k + 1), ring(0, k)]).collect();
    for r in 0..rings - 1 {
        for k in 0..around {
            let (a, b, c, d) = (ring(r, k), ring(r, k + 1), ring(r + 1, k), ring(r + 1, k + 1));
            t.push([a, b, c]);
            t.push([b, d, c]);
        }
    }
    t.extend((0..around).map(|k| [last, ring(rings - 1, k), ring(rings - 1, k + 1)]));
    t
}

/// The arm's profile: `(s, radius)` along its axis from the shoulder's pole (`s < 0`) to the
/// hand's (`s > UPPER + FOREARM`), m; radius 0 at the poles.
fn arm_profile() -> Vec<(f64, f64)> {
    let length = UPPER + FOREARM;
    let radius = |s: f64| {
        if s < UPPER {
            RADII[0] + (RADII[1] - RADII[0]) * s / UPPER
        } else {
            RADII[1] + (RADII[2] - RADII[1]) * (s - UPPER) / FOREARM
        }
    };
    let cap = |k: usize| FRAC_PI_2 * k as f64 / ARM_CAP as f64;
    let mut p = vec![(-RADII[0], 0.0)];
    p.extend((1..ARM_CAP).map(|k| (-RADII[0] * cap(k).cos(), RADII[0] * cap(k).sin())));
    p.extend((0..ARM_RINGS).map(|i| {
        let s = length * i as f64 / (ARM_RINGS - 1) as f64;
        (s, radius(s))
    }));
    p.extend((1..ARM_CAP).rev().map(|k| (length + RADII[2] * cap(k).cos(), RADII[2] * cap(k).sin())));
    p.push((length + RADII[2], 0.0));
    p
}

/// A point on the arm's axis at `s` (m) and the axis's direction there, in the arm's own frame:
/// the upper arm along +x, the forearm turned by `bend` (rad) towards +y along a circular arc
/// of length `2 · ELBOW_HALF` centred on the elbow (straight past either end).
fn axis(s: f64, bend: f64) -> (V, f64) {
    let start = UPPER - ELBOW_HALF;
    if s <= start || bend.abs() < 1e-9 {
        return ([s, 0.0, 0.0], if s <= start { 0.0 } else { bend });
    }
    let radius = 2.0 * ELBOW_HALF / bend;
    let turned = bend * ((s - start) / (2.0 * ELBOW_HALF)).min(1.0);
    let on_arc = [start + radius * turned.sin(), radius * (1.0 - turned.cos()), 0.0];
    let past = (s - UPPER - ELBOW_HALF).max(0.0);
    (add(on_arc, [past * bend.cos(), past * bend.sin(), 0.0]), turned)
}

/// The left arm's vertices in the torso's rest frame: poles and rings of [`arm_profile`] about
/// the axis bent by `elbow`, turned out from the side by `abduction` and forward by `swing`
/// (rad), from [`JOINT`]. The arm's +x (along it) hangs along −y before it is turned, its +y
/// (the way the elbow bends) points forward (+z), its +z inward (−x).
fn left_arm(abduction: f64, swing: f64, elbow: f64) -> Vec<V> {
    let (sa, ca) = abduction.sin_cos();
    let (sf, cf) = swing.sin_cos();
    // The arm frame's axes in the torso's frame: hanging, then out about +z, then forward about x.
    let turn = |v: V| {
        let hanging = [-v[2], -v[0], v[1]];
        let out = [ca * hanging[0] - sa * hanging[1], sa * hanging[0] + ca * hanging[1], hanging[2]];
        [out[0], cf * out[1] + sf * out[2], -sf * out[1] + cf * out[2]]
    };
    let mut v = Vec::new();
    for (s, r) in arm_profile() {
        let (centre, angle) = axis(s, elbow);
        let around = if r == 0.0 { 1 } else { ARM_AROUND };
        for k in 0..around {
            let phi = TAU * k as f64 / ARM_AROUND as f64;
            let (ss, cs) = angle.sin_cos();
            // About the axis: the bend's normal (−sin, cos, 0) and +z.
            let ring = [-ss * phi.cos() * r, cs * phi.cos() * r, phi.sin() * r];
            v.push(add(JOINT, turn(add(centre, ring))));
        }
    }
    v
}

/// Every vertex of the body at time `t`, in OBJ order: the torso, the left arm, the right arm.
fn body_at(t: f64) -> Vec<V> {
    let p = pose(t);
    let mut v: Vec<V> = torso_rest().into_iter().map(|q| on_body(q, up(q[1]), &p)).collect();
    let shoulder = up(JOINT[1]);
    let left = left_arm(p.abduction, p.swing[0], p.elbow[0]);
    v.extend(left.iter().map(|&q| on_body(q, shoulder, &p)));
    let right = left_arm(p.abduction, p.swing[1], p.elbow[1]);
    v.extend(right.iter().map(|&q| on_body([-q[0], q[1], q[2]], shoulder, &p)));
    v
}

/// The OBJ objects: name, first vertex (0-based) and triangles (0-based, outward).
fn objects() -> Vec<(&'static str, usize, Vec<[usize; 3]>)> {
    let torso = torso_rest().len();
    let arm = left_arm(0.0, 0.0, 0.0).len();
    let arm_rings = arm_profile().len() - 2;
    let left = tube_triangles(arm_rings, ARM_AROUND);
    // The mirror image turns every triangle inside out: wind it the other way.
    let right = left.iter().map(|t| [t[0], t[2], t[1]]).collect();
    vec![
        ("torso", 0, tube_triangles(torso_rings().len(), TORSO_AROUND)),
        ("left_arm", torso, left),
        ("right_arm", torso + arm, right),
    ]
}

/// The OBJ file: the rest pose (frame 0), rounded as written.
fn obj_text(rest: &[V]) -> String {
    let objects = objects();
    let triangles: usize = objects.iter().map(|o| o.2.len()).sum();
    let mut s = String::new();
    s.push_str("# A character for examples/walk.toml (cargo run --example make_walk): a torso with a\n");
    s.push_str("# head and two arms, each closed with outward normals, in a T-pose. Units: m, y up.\n");
    let _ = writeln!(s, "# {} vertices, {triangles} triangles.", rest.len());
    for v in rest {
        let _ = writeln!(s, "v {:.6} {:.6} {:.6}", v[0], v[1], v[2]);
    }
    for (name, first, faces) in objects {
        let _ = writeln!(s, "o {name}");
        for t in faces {
            let _ = writeln!(s, "f {} {} {}", first + t[0] + 1, first + t[1] + 1, first + t[2] + 1);
        }
    }
    s
}

/// The PC2 cache of the motion.
fn pc2_bytes() -> Vec<u8> {
    let points = body_at(0.0).len();
    let mut b = weft_io::pc2::header(points as i32, 0.0, 1.0, FRAMES as i32).to_vec();
    for k in 0..FRAMES {
        for v in body_at(k as f64 / FPS) {
            for c in v {
                b.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
    }
    b
}

/// Signed volume of each object at rest (m³): positive when its triangles face out.
fn volumes(rest: &[V]) -> Vec<(&'static str, f64)> {
    let det = |a: V, b: V, c: V| {
        a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
            + a[2] * (b[0] * c[1] - b[1] * c[0])
    };
    objects()
        .into_iter()
        .map(|(name, first, t)| {
            let at = |i: usize| rest[first + i];
            (name, t.iter().map(|t| det(at(t[0]), at(t[1]), at(t[2])) / 6.0).sum())
        })
        .collect()
}

/// The least distance from the shirt's vertices in `obj` (the `tshirt` object of
/// `examples/garment.obj`) to the body at rest, m: to the arms' surfaces along their axes, and
/// inside the torso's cross-section at the vertex's height measured as a fraction of it.
fn clearance(obj: &str) -> f64 {
    let mut shirt = false;
    let mut least = f64::INFINITY;
    for line in obj.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("o") => shirt = w.next() == Some("tshirt"),
            Some("v") if shirt => {
                let p: Vec<f64> = w.map(|c| c.parse().expect("a coordinate")).collect();
                least = least.min(clear_of_body([p[0], p[1], p[2]]));
            }
            _ => {}
        }
    }
    least
}

/// How far `p` (at rest) is outside the body, m (negative inside): the torso by its section at
/// `p`'s height (the distance along the ray from the axis), the arms by their straight axes
/// (never more than the true distance).
fn clear_of_body(p: V) -> f64 {
    let rings = torso_rings();
    let torso = rings.windows(2).find(|w| (w[0].0..=w[1].0).contains(&p[1])).map_or(f64::INFINITY, |w| {
        let t = (p[1] - w[0].0) / (w[1].0 - w[0].0);
        let (a, b) = (w[0].1 + t * (w[1].1 - w[0].1), w[0].2 + t * (w[1].2 - w[0].2));
        let r = p[0].hypot(p[2]);
        let on_surface = 1.0 / ((p[0] / r / a).powi(2) + (p[2] / r / b).powi(2)).sqrt();
        r - on_surface
    });
    // The arms at rest lie along ±x; a sphere of the shoulder's radius swept along the axis
    // holds every ring and both rounded ends.
    let arm = |q: V| {
        let s = (q[0] - JOINT[0]).clamp(0.0, UPPER + FOREARM);
        let off = [q[0] - JOINT[0] - s, q[1] - JOINT[1], q[2] - JOINT[2]];
        (off[0].powi(2) + off[1].powi(2) + off[2].powi(2)).sqrt() - RADII[0]
    };
    torso.min(arm(p)).min(arm([-p[0], p[1], p[2]]))
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("examples/walk"));
    std::fs::create_dir_all(&dir)?;
    // The OBJ file's vertices, as read back (6 decimals), are frame 0 of the cache.
    let rest: Vec<V> = body_at(0.0).iter().map(|v| v.map(|c| format!("{c:.6}").parse().unwrap())).collect();
    for (name, volume) in volumes(&rest) {
        assert!(volume > 0.0, "{name} is wound inward (volume {volume} m³)");
    }
    let garment = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/garment.obj");
    if let Ok(text) = std::fs::read_to_string(&garment) {
        let least = clearance(&text);
        assert!(least > CLEARANCE, "the shirt starts {least:.4} m from the body");
        eprintln!("the shirt starts at least {least:.4} m from the body");
    }
    let obj = dir.join("body.obj");
    std::fs::write(&obj, obj_text(&rest))?;
    let pc2 = dir.join("body.pc2");
    std::fs::write(&pc2, pc2_bytes())?;
    eprintln!("wrote {} and {}", obj.display(), pc2.display());
    Ok(())
}
