//! Promise: a render mesh (`render_mesh = "FILE.obj"`) is bound to the simulated proxy at rest and
//! rebuilt from it after every frame. A render mesh equal to the proxy comes back to 1e-6 m; a
//! render mesh three times finer in each direction follows a sheet folded onto itself without one
//! pair of its triangles crossing; the render mesh's faces and UVs reach the caches; a render
//! vertex out of reach, a render mesh away from its proxy and a missing file are one-line errors
//! naming the file, the line and the key.

use std::fmt::Write as _;
use std::path::Path;

use weft::core::limits::Limits;
use weft::geometry::intersections::intersecting_pairs;
use weft::io::{CacheFormat, Pc2, parse_scene, read_pc2};

/// The text of a scene with one grid cloth, `name`, and `extra` lines added to its table.
fn scene_text(grid: &str, extra: &str, simulation: &str) -> String {
    format!("[simulation]\n{simulation}\n\n[[cloth]]\nname = \"sheet\"\ngrid = {grid}\n{extra}\n")
}

/// The rest positions of the scene's only cloth (its grid, before any render mesh is named).
fn rest_positions(dir: &Path, text: &str) -> Vec<[f32; 3]> {
    let scene = parse_scene(text, &dir.join("scene.toml"), &Limits::default()).unwrap();
    let model = scene.build_model().unwrap();
    model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]).collect()
}

/// An OBJ of `points` with quads `faces` (0-based) and a UV per point.
fn write_obj(path: &Path, points: &[[f32; 3]], faces: &[[u32; 4]]) {
    let mut obj = String::from("o render\n");
    for p in points {
        let _ = writeln!(obj, "v {} {} {}", p[0], p[1], p[2]);
    }
    for (k, _) in points.iter().enumerate() {
        let _ = writeln!(obj, "vt {} {}", k as f32 / points.len() as f32, 0.5);
    }
    for f in faces {
        let _ = writeln!(obj, "f {0}/{0} {1}/{1} {2}/{2} {3}/{3}", f[0] + 1, f[1] + 1, f[2] + 1, f[3] + 1);
    }
    std::fs::write(path, obj).unwrap();
}

/// The quads of an `nu × nv` grid of points numbered row by row (`index(i, j)` maps them).
fn grid_quads(nu: u32, nv: u32, index: impl Fn(u32, u32) -> u32) -> Vec<[u32; 4]> {
    let mut q = Vec::new();
    for j in 0..nv - 1 {
        for i in 0..nu - 1 {
            q.push([index(i, j), index(i + 1, j), index(i + 1, j + 1), index(i, j + 1)]);
        }
    }
    q
}

/// Bakes the scene `text` in `dir` to PC2 (and `formats`) on `threads` threads; returns the
/// render cache and the proxy cache.
fn bake(dir: &Path, text: &str, formats: Vec<CacheFormat>, threads: usize) -> (Pc2, Pc2) {
    let path = dir.join("scene.toml");
    std::fs::write(&path, text).unwrap();
    let scene = parse_scene(text, &path, &Limits::default()).unwrap();
    let out = dir.join(format!("out{threads}"));
    let options =
        weft::bake::BakeOptions { threads: Some(threads), formats, ..weft::bake::BakeOptions::new(&out) };
    weft::bake::bake(&scene, &options).unwrap();
    (read_pc2(&out.join("sheet.pc2")).unwrap(), read_pc2(&out.join("sheet_proxy.pc2")).unwrap())
}

/// The error line of building the scene `text` in `dir`.
fn error(dir: &Path, text: &str) -> String {
    let path = dir.join("scene.toml");
    match parse_scene(text, &path, &Limits::default()).and_then(|s| s.build_model()) {
        Ok(_) => panic!("the scene was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const HANGING: &str = "fps = 30.0\nframes = 30\nsubsteps = 8";
const GRID: &str = "{ resolution = [9, 7], size = [0.8, 0.6], origin = [0.0, 1.0, 0.0], plane = \"xz\" }";

#[test]
fn a_render_mesh_equal_to_the_proxy_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let pins = "pin_corners = [\"top-left\", \"top-right\"]\nbending_compliance = 1.0";
    let rest = rest_positions(dir.path(), &scene_text(GRID, pins, HANGING));
    // The same points, numbered backwards, so a binding by index would fail.
    let n = rest.len() as u32;
    let backwards: Vec<[f32; 3]> = rest.iter().rev().copied().collect();
    write_obj(&dir.path().join("render.obj"), &backwards, &grid_quads(9, 7, |i, j| n - 1 - (j * 9 + i)));
    let text =
        scene_text(GRID, &format!("{pins}\nrender_mesh = \"render.obj\"\ncache_proxy = true"), HANGING);
    let (render, proxy) = bake(dir.path(), &text, vec![CacheFormat::Pc2], 1);
    assert_eq!(render.point_count as u32, n);
    let mut largest = 0.0f32;
    let mut moved = 0.0f32;
    for k in 0..proxy.sample_count {
        let (r, p) = (render.sample(k), proxy.sample(k));
        for (i, q) in p.iter().enumerate() {
            let v = r[(n - 1) as usize - i];
            for c in 0..3 {
                largest = largest.max((v[c] - q[c]).abs());
                moved = moved.max((q[c] - rest[i][c]).abs());
            }
        }
    }
    assert!(moved > 0.1, "the proxy hardly moved ({moved} m): the test shows nothing");
    assert!(largest <= 1e-6, "the render mesh strays {largest} m from the proxy it equals");
}

/// A sheet folded onto itself (as `examples/fold.toml`, smaller), with a render mesh three times
/// finer in each direction (8.3 times the vertices).
#[test]
fn a_finer_render_mesh_follows_a_fold_without_crossing() {
    let dir = tempfile::tempdir().unwrap();
    let simulation = "fps = 60.0\nframes = 100\nmax_strain = 0.02\nmin_substeps = 8\nmax_substeps = 64\nvelocity_damping = 1.0";
    let grid = "{ resolution = [21, 13], size = [1.0, 0.6], origin = [-0.5, 0.006, -0.3], plane = \"xz\" }";
    let cloth = "density = 0.2\nstretch_compliance = 1e-7\nshear_compliance = 1e-5\nbending_compliance = 100.0\n\
        pin_box = { min = [0.49, -1.0, -1.0], max = [0.51, 1.0, 1.0] }\n\
        follow = [{ time = 0.0 }, { time = 0.4, position = [-0.35, 0.3, 0.0] }, { time = 0.8, position = [-0.8, 0.25, 0.0] }, { time = 1.2, position = [-0.95, 0.006, 0.0] }]\n\
        self_collision = \"triangles\"\nself_thickness = 0.006\nself_friction = 0.3";
    let floor = "\n[[collider]]\nname = \"floor\"\nshape = \"plane\"\nthickness = 0.005\nfriction = 0.5\n";
    let (nu, nv) = (61u32, 37u32);
    let render: Vec<[f32; 3]> = (0..nu * nv)
        .map(|k| {
            let (i, j) = (k % nu, k / nu);
            [-0.5 + i as f32 / (nu - 1) as f32, 0.006, -0.3 + 0.6 * j as f32 / (nv - 1) as f32]
        })
        .collect();
    let quads = grid_quads(nu, nv, |i, j| j * nu + i);
    write_obj(&dir.path().join("fine.obj"), &render, &quads);
    let text =
        scene_text(grid, &format!("{cloth}\nrender_mesh = \"fine.obj\"\ncache_proxy = true"), simulation)
            + floor;
    let (fine, proxy) = bake(dir.path(), &text, vec![CacheFormat::Pc2], 2);
    assert!(
        fine.point_count >= 4 * proxy.point_count,
        "{} render points for {}",
        fine.point_count,
        proxy.point_count
    );

    let triangles: Vec<[u32; 3]> =
        quads.iter().flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]).collect();
    let last = fine.sample(fine.sample_count - 1);
    // The fold happened: the sheet now spans about half its width, in two layers.
    let span = |s: &[[f32; 3]]| {
        s.iter().map(|p| p[0]).fold(f32::MIN, f32::max) - s.iter().map(|p| p[0]).fold(f32::MAX, f32::min)
    };
    assert!(span(last) < 0.65, "the render mesh spans {} m: the sheet did not fold", span(last));
    for k in 0..fine.sample_count {
        assert_eq!(intersecting_pairs(fine.sample(k), &triangles), 0, "render triangles cross at frame {k}");
    }
    // Bound to the surface at rest, the render vertices stay on it: their highest point is the
    // proxy's to rounding.
    let top = |s: &[[f32; 3]]| s.iter().map(|p| p[1]).fold(f32::MIN, f32::max);
    assert!((top(last) - top(proxy.sample(proxy.sample_count - 1))).abs() < 1e-4);

    // The same bytes on one thread as on two.
    let (again, _) = bake(dir.path(), &text, vec![CacheFormat::Pc2], 1);
    for k in 0..fine.sample_count {
        assert_eq!(fine.sample(k), again.sample(k), "frame {k} differs between 1 and 2 threads");
    }
}

#[test]
fn bad_render_meshes_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let rest = rest_positions(dir.path(), &scene_text(GRID, "", HANGING));
    let quads = grid_quads(9, 7, |i, j| j * 9 + i);

    let e = error(dir.path(), &scene_text(GRID, "render_mesh = \"missing.obj\"", HANGING));
    assert!(e.contains("render_mesh") && e.contains("missing.obj"), "{e}");

    // One vertex 1 m above the sheet: named by its line.
    let mut lifted = rest.clone();
    lifted[20][1] += 1.0;
    write_obj(&dir.path().join("lifted.obj"), &lifted, &quads);
    let e = error(dir.path(), &scene_text(GRID, "render_mesh = \"lifted.obj\"", HANGING));
    assert!(e.contains("lifted.obj") && e.contains("lifted.obj:22:") && e.contains("reach"), "{e}");

    // The whole mesh 10 m away (another place, or other units).
    let away: Vec<[f32; 3]> = rest.iter().map(|p| [p[0] + 10.0, p[1], p[2]]).collect();
    write_obj(&dir.path().join("away.obj"), &away, &quads);
    let e = error(dir.path(), &scene_text(GRID, "render_mesh = \"away.obj\"", HANGING));
    assert!(e.contains("away.obj") && e.contains("no render vertex"), "{e}");

    let e = error(dir.path(), &scene_text(GRID, "cache_proxy = true", HANGING));
    assert!(e.contains("cache_proxy") && e.contains("render_mesh"), "{e}");

    // The proxy's cache would take another cloth's name.
    write_obj(&dir.path().join("same.obj"), &rest, &quads);
    let two = scene_text(GRID, "render_mesh = \"same.obj\"\ncache_proxy = true", HANGING)
        + &format!("\n[[cloth]]\nname = \"sheet_proxy\"\ngrid = {GRID}\n");
    let e = error(dir.path(), &two);
    assert!(e.contains("sheet_proxy"), "{e}");
    assert!(!e.contains('\n'));
}
