//! Writes `examples/cape/body.obj` (a low-poly character body) and `examples/cape/body.pc2` (it
//! walking), the animated mesh collider of `examples/cape.toml`:
//!
//! ```sh
//! cargo run --example make_cape               # into examples/cape/ (or give another folder)
//! cargo run --release -- bake examples/cape.toml --out out/cape --format pc2,usd,obj
//! ```
//!
//! **The body** is one closed surface of revolution about the y axis (m, y up, facing +z) with
//! elliptical cross-sections: a rounded bottom at the hips (0.8 m), the torso widening to the
//! chest and the shoulders (0.4 m across, 1.42 m up), a neck, and a head (a sphere-like cap up to
//! 1.80 m). It has `RINGS` rings of `SEGMENTS` vertices plus a pole at each end: 416 triangles
//! over 210 vertices, every triangle wound counter-clockwise seen from outside (its normal
//! `(b − a) × (c − a)` points out).
//!
//! **The walk** (`FRAMES` frames at `FPS`, 2.5 s): the body speeds up from rest over the first
//! 0.5 s to 0.8 m/s along its heading, which turns from +z by 45° to the left between 1.0 s and
//! 2.0 s, so it covers about 1.8 m; it bobs 2 cm twice per stride, sways (rolls) 4° and twists its
//! shoulders against its hips by up to 12° (the twist grows with height), once per stride (1 Hz).
//! The shoulders move about 1.8 m in all, and tens of cm sideways in the turn. Frame 0 is the
//! OBJ file's rest pose. The PC2 cache has one point per OBJ vertex, in file order.
//!
//! The output depends on nothing but this file: it is byte-for-byte the same on every run.

use std::f64::consts::{PI, TAU};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Vertices around each ring.
const SEGMENTS: usize = 16;
/// Frames of the animation: frame `k` at `k / FPS` s.
const FRAMES: usize = 61;
/// Frames per second of the animation.
const FPS: f64 = 24.0;
/// Walking speed once under way, m/s.
const SPEED: f64 = 0.8;
/// Time to get up to speed, s.
const SPEED_UP: f64 = 0.5;
/// The turn: from this time, for this long, by this angle (rad, to the left: about +y).
const TURN: (f64, f64, f64) = (1.0, 1.0, PI / 4.0);
/// Strides per second (one sway and one twist each; two bobs).
const STRIDE_HZ: f64 = 1.0;
/// Bob amplitude (m), sway amplitude (rad), shoulder twist amplitude (rad).
const BOB: f64 = 0.02;
const SWAY: f64 = 4.0 * PI / 180.0;
const TWIST: f64 = 12.0 * PI / 180.0;
/// Heights of the hips' bottom and the shoulders, m (the twist grows from 0 to 1 between them).
const HIP_Y: f64 = 0.8;
const SHOULDER_Y: f64 = 1.42;

/// The rings from bottom to top: `(height m, half-width along x m, half-depth along z m)`.
/// The poles are at `BOTTOM` and `TOP`.
const RINGS: [(f64, f64, f64); 13] = [
    (0.82, 0.10, 0.07), // rounding into the bottom
    (0.88, 0.15, 0.10), // hips
    (0.98, 0.16, 0.10),
    (1.08, 0.15, 0.095), // waist
    (1.20, 0.17, 0.105), // chest
    (1.32, 0.19, 0.11),
    (1.40, 0.20, 0.105), // shoulders
    (1.45, 0.15, 0.085), // top of the shoulders
    (1.50, 0.055, 0.05), // neck
    (1.56, 0.06, 0.055),
    (1.62, 0.095, 0.10), // head
    (1.70, 0.10, 0.105),
    (1.76, 0.07, 0.075),
];
const BOTTOM: f64 = HIP_Y;
const TOP: f64 = 1.80;

/// The rest vertices: the bottom pole, the rings (each starting at +x, turning towards −z, so
/// counter-clockwise seen from above), the top pole.
fn rest_vertices() -> Vec<[f64; 3]> {
    let mut v = vec![[0.0, BOTTOM, 0.0]];
    for &(y, rx, rz) in &RINGS {
        for s in 0..SEGMENTS {
            let a = TAU * s as f64 / SEGMENTS as f64;
            v.push([rx * a.cos(), y, -rz * a.sin()]);
        }
    }
    v.push([0.0, TOP, 0.0]);
    v
}

/// Triangles (1-based OBJ indices), outward normals.
fn triangles() -> Vec<[usize; 3]> {
    let ring = |r: usize, s: usize| 2 + r * SEGMENTS + s % SEGMENTS;
    let top = 2 + RINGS.len() * SEGMENTS;
    let mut t = Vec::new();
    for s in 0..SEGMENTS {
        t.push([1, ring(0, s + 1), ring(0, s)]);
    }
    for r in 0..RINGS.len() - 1 {
        for s in 0..SEGMENTS {
            let (a, b, c, d) = (ring(r, s), ring(r, s + 1), ring(r + 1, s), ring(r + 1, s + 1));
            t.push([a, b, c]);
            t.push([b, d, c]);
        }
    }
    for s in 0..SEGMENTS {
        t.push([top, ring(RINGS.len() - 1, s), ring(RINGS.len() - 1, s + 1)]);
    }
    t
}

fn smoothstep(x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Heading (rad about +y, 0 = facing +z) at time `t`.
fn heading(t: f64) -> f64 {
    TURN.2 * smoothstep((t - TURN.0) / TURN.1)
}

/// Speed at time `t`, m/s.
fn speed(t: f64) -> f64 {
    SPEED * smoothstep(t / SPEED_UP)
}

/// The path: `(x, z)` of the hips at each frame, integrated from rest in 100 substeps per frame
/// (midpoint rule).
fn path() -> Vec<[f64; 2]> {
    let n = 100;
    let dt = 1.0 / (FPS * n as f64);
    let mut p = [0.0f64; 2];
    let mut out = vec![p];
    for k in 0..FRAMES - 1 {
        for i in 0..n {
            let t = (k * n + i) as f64 * dt + dt / 2.0;
            p[0] += speed(t) * heading(t).sin() * dt;
            p[1] += speed(t) * heading(t).cos() * dt;
        }
        out.push(p);
    }
    out
}

/// `v` turned by `angle` about +y.
fn yaw(v: [f64; 3], angle: f64) -> [f64; 3] {
    let (s, c) = angle.sin_cos();
    [c * v[0] + s * v[2], v[1], -s * v[0] + c * v[2]]
}

/// `v` turned by `angle` about +z around the point at height `y0` on the axis.
fn roll(v: [f64; 3], angle: f64, y0: f64) -> [f64; 3] {
    let (s, c) = angle.sin_cos();
    let (x, y) = (v[0], v[1] - y0);
    [c * x - s * y, y0 + s * x + c * y, v[2]]
}

/// The vertices at time `t`, hips at `at`.
fn posed(rest: &[[f64; 3]], t: f64, at: [f64; 2]) -> Vec<[f64; 3]> {
    // Ease the stride in with the speed, so frame 0 is the rest pose.
    let gait = smoothstep(t / SPEED_UP);
    let phase = TAU * STRIDE_HZ * t;
    let bob = BOB * gait * (1.0 - (2.0 * phase).cos()) / 2.0;
    let sway = SWAY * gait * phase.sin();
    let twist = TWIST * gait * phase.sin();
    rest.iter()
        .map(|&v| {
            let up = ((v[1] - HIP_Y) / (SHOULDER_Y - HIP_Y)).clamp(0.0, 1.0);
            let v = yaw(v, twist * up);
            let v = roll(v, sway, HIP_Y);
            let v = yaw(v, heading(t));
            [v[0] + at[0], v[1] + bob, v[2] + at[1]]
        })
        .collect()
}

/// The OBJ file: the rest pose.
fn obj_text(rest: &[[f64; 3]]) -> String {
    let mut s = String::new();
    s.push_str("# A low-poly character body for examples/cape.toml (cargo run --example make_cape).\n");
    let _ = writeln!(
        s,
        "# {} vertices, {} triangles, closed, normals outward. Units: m, y up.",
        rest.len(),
        triangles().len()
    );
    s.push_str("o body\n");
    for v in rest {
        let _ = writeln!(s, "v {:.6} {:.6} {:.6}", v[0], v[1], v[2]);
    }
    for t in triangles() {
        let _ = writeln!(s, "f {} {} {}", t[0], t[1], t[2]);
    }
    s
}

/// The PC2 cache of the walk.
fn pc2_bytes(rest: &[[f64; 3]]) -> Vec<u8> {
    let mut b = weft_io::pc2::header(rest.len() as i32, 0.0, 1.0, FRAMES as i32).to_vec();
    for (k, at) in path().into_iter().enumerate() {
        for v in posed(rest, k as f64 / FPS, at) {
            for c in v {
                b.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
    }
    b
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("examples/cape"));
    std::fs::create_dir_all(&dir)?;
    let rest = rest_vertices();
    // The OBJ file's vertices, as read back (6 decimals), are the ones the cache animates.
    let rest: Vec<[f64; 3]> = rest.iter().map(|v| v.map(|c| format!("{c:.6}").parse().unwrap())).collect();
    let obj = dir.join("body.obj");
    std::fs::write(&obj, obj_text(&rest))?;
    let pc2 = dir.join("body.pc2");
    std::fs::write(&pc2, pc2_bytes(&rest))?;
    eprintln!("wrote {} and {}", obj.display(), pc2.display());
    Ok(())
}
