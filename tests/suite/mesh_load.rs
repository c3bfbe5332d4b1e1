//! Promise: a mesh cloth becomes the cloth its OBJ file describes. Quads become two triangles
//! with both diagonals as shear edges; UVs survive into the USD and OBJ caches corner for corner;
//! objects are chosen by name; stretch edges sort into warp and weft by their UV direction; pins
//! come from boxes and index files; and the shipped garment validates with more than 2,000
//! triangles and bakes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use weft::core::limits::Limits;
use weft::io::{ObjectSelection, Scene, load_scene, parse_obj};

const WEFT: &str = env!("CARGO_BIN_EXE_weft");

/// An `nu × nv`-vertex grid of quads in the xy plane (spacing 0.1 m, lower-left vertex first,
/// rows along x), vertex `(i, j)` with the UV `uv(i/(nu−1), j/(nv−1))`.
fn grid_obj(nu: usize, nv: usize, uv: impl Fn(f64, f64) -> [f64; 2]) -> String {
    let mut s = String::from("o grid\n");
    for j in 0..nv {
        for i in 0..nu {
            s += &format!("v {} {} 0\n", i as f64 * 0.1, j as f64 * 0.1);
        }
    }
    for j in 0..nv {
        for i in 0..nu {
            let [u, v] = uv(i as f64 / (nu - 1) as f64, j as f64 / (nv - 1) as f64);
            s += &format!("vt {u} {v}\n");
        }
    }
    let n = |i: usize, j: usize| j * nu + i + 1;
    for j in 0..nv - 1 {
        for i in 0..nu - 1 {
            let c = [n(i, j), n(i + 1, j), n(i + 1, j + 1), n(i, j + 1)];
            s += &format!("f {0}/{0} {1}/{1} {2}/{2} {3}/{3}\n", c[0], c[1], c[2], c[3]);
        }
    }
    s
}

const HEAD: &str =
    "[simulation]\nfps = 24.0\nframes = 2\n\n[[cloth]]\nname = \"c\"\nmesh = \"m.obj\"\ndensity = 0.2\n";

/// Writes the scene (after [`HEAD`]) and files into a fresh folder and loads it.
fn load(extra: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, Scene) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("scene.toml");
    fs::write(&path, format!("{HEAD}{extra}")).unwrap();
    let scene = load_scene(&path, &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    (dir, scene)
}

fn weft(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(WEFT).args(args).output().expect("weft runs")
}

fn weft_ok(args: &[&std::ffi::OsStr]) -> String {
    let out = weft(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn quads_become_two_triangles_with_both_diagonals_as_shear() {
    let text = grid_obj(4, 3, |u, v| [u, v]);
    let mesh = parse_obj(text.as_bytes(), &ObjectSelection::Only).unwrap();
    assert_eq!(mesh.triangles.len(), 12);
    assert_eq!(mesh.quads.len(), 6);
    assert_eq!(mesh.face_counts, [0, 6, 0]);
    // Each pair shares the split diagonal, and the two triangles cover the quad's four corners.
    for &[a, b] in &mesh.quads {
        let (ta, tb) = (mesh.triangles[a as usize], mesh.triangles[b as usize]);
        assert_eq!(ta.iter().filter(|p| tb.contains(p)).count(), 2);
        let mut corners: Vec<u32> = ta.iter().chain(&tb).copied().collect();
        corners.sort_unstable();
        corners.dedup();
        assert_eq!(corners.len(), 4);
    }
    let (_dir, scene) = load("", &[("m.obj", &text)]);
    let model = scene.build_model().unwrap();
    // Sides: 3 per row × 3 rows + 4 per column × 2; diagonals: 2 per quad.
    assert_eq!((model.report().stretch, model.report().shear), (3 * 3 + 4 * 2, 2 * 6));
    let (_dir, scene) = load("shear = false\n", &[("m.obj", &text)]);
    assert_eq!(scene.build_model().unwrap().report().shear, 0);

    // Triangles that are not from quads: the opposite vertices of each shared edge.
    let tris = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n";
    let (_dir, scene) = load("", &[("m.obj", tris)]);
    let cloth = &scene.cloths()[0];
    assert_eq!(cloth.edge_sets[0].edges.len(), 5);
    assert_eq!(cloth.edge_sets[1].edges, vec![[1, 3]]);
}

/// The text of the one file in `dir` whose name ends with `suffix`.
fn read_one(dir: &Path, suffix: &str) -> String {
    let mut hits: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    hits.sort();
    fs::read_to_string(&hits[0]).unwrap()
}

#[test]
fn uvs_round_trip_into_usd_and_obj_caches() {
    // UVs with a seam: the right column's quads take their UVs from another island.
    let mut text = grid_obj(3, 2, |u, v| [u * 0.5, v * 0.5]);
    text = text.replace("f 2/2 3/3 6/6 5/5", "vt 0.75 0\nvt 1 0\nvt 1 0.5\nvt 0.75 0.5\nf 2/7 3/8 6/9 5/10");
    let input = parse_obj(text.as_bytes(), &ObjectSelection::Only).unwrap();
    assert_eq!(input.positions.len(), 6, "a UV seam does not split a particle");
    let (dir, _scene) = load("", &[("m.obj", &text)]);
    let out = dir.path().join("out");
    let scene = dir.path().join("scene.toml");
    weft_ok(&[
        "bake".as_ref(),
        scene.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "pc2,usd,obj".as_ref(),
        "-q".as_ref(),
    ]);

    // OBJ: the cache reads back with the same faces (quads) and the same UV at every corner.
    let frame = read_one(&out, ".0002.obj");
    let back = parse_obj(frame.as_bytes(), &ObjectSelection::Only).unwrap();
    assert_eq!(back.polygons, input.polygons);
    assert_eq!(back.polygons.sizes(), [4, 4]);
    assert_eq!(back.objects, ["c"], "the `o` line names the cloth");
    assert_eq!(back.positions.len(), 6);

    // USD: face-varying `st`, indexed, in the order of faceVertexIndices.
    let usd = read_one(&out, ".usda");
    let line =
        |key: &str| usd.lines().find(|l| l.contains(key)).unwrap_or_else(|| panic!("{key}")).to_string();
    let list = |l: String| -> Vec<String> {
        let inner = &l[l.find("= [").unwrap() + 3..l.rfind(']').unwrap()];
        inner.split(", ").map(str::to_string).collect()
    };
    let values: Vec<[f32; 2]> = {
        let l = line("texCoord2f[] primvars:st = ");
        let inner = &l[l.find("= [").unwrap() + 3..l.rfind(']').unwrap()];
        inner
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split("), (")
            .map(|p| {
                let (u, v) = p.split_once(", ").unwrap();
                [u.parse().unwrap(), v.parse().unwrap()]
            })
            .collect()
    };
    assert!(usd.contains("interpolation = \"faceVarying\""));
    let indices: Vec<usize> =
        list(line("int[] primvars:st:indices")).iter().map(|s| s.parse().unwrap()).collect();
    let vertices: Vec<u32> =
        list(line("int[] faceVertexIndices")).iter().map(|s| s.parse().unwrap()).collect();
    assert_eq!(vertices, input.polygons.corners());
    assert_eq!(line("int[] faceVertexCounts"), "        int[] faceVertexCounts = [4, 4]");
    let corners: Vec<[f32; 2]> = indices.iter().map(|&i| values[i]).collect();
    assert_eq!(corners, input.polygons.uvs());
}

#[test]
fn objects_are_chosen_by_name() {
    let two = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\no left\nf 1 2 3\nf 1 3 4\no right\nf 2 5 3\n";
    let (_dir, scene) = load("object = \"right\"\n", &[("m.obj", two)]);
    assert_eq!(scene.cloths()[0].positions, vec![[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 0.0, 0.0]]);
    let (_dir, scene) = load("object = \"left\"\n", &[("m.obj", two)]);
    assert_eq!(scene.cloths()[0].triangles.len(), 2);
    // Both, merged: the shared vertices 2 and 3 stay one particle each.
    let (_dir, scene) = load("object = [\"right\", \"left\"]\n", &[("m.obj", two)]);
    let cloth = &scene.cloths()[0];
    assert_eq!((cloth.positions.len(), cloth.triangles.len()), (5, 3));
    assert!(scene.build_model().is_ok());
}

#[test]
fn warp_and_weft_follow_the_uv_directions() {
    let materials = "stretch_compliance = 1e-4\nwarp_compliance = 1e-6\nweft_compliance = 1e-5\n";
    let sets = |scene: &Scene| -> Vec<(&'static str, usize)> {
        scene.cloths()[0].edge_sets.iter().map(|s| (s.field, s.edges.len())).collect()
    };
    // UV-aligned: rows (along x = U) are warp, columns weft.
    let aligned = grid_obj(5, 4, |u, v| [u, v]);
    let (_dir, scene) = load(materials, &[("m.obj", &aligned)]);
    assert_eq!(
        sets(&scene),
        [("edges", 0), ("warp_edges", 4 * 4), ("weft_edges", 5 * 3), ("shear_edges", 24)]
    );
    let model = scene.build_model().unwrap();
    assert_eq!(model.report().stretch, 31);
    // UVs turned a quarter: rows run along V, so they are weft.
    let turned = grid_obj(5, 4, |u, v| [v, u]);
    let (_dir, scene) = load(materials, &[("m.obj", &turned)]);
    assert_eq!(
        sets(&scene),
        [("edges", 0), ("warp_edges", 5 * 3), ("weft_edges", 4 * 4), ("shear_edges", 24)]
    );
    // UVs turned by 45°: every side is bias and keeps the stretch material.
    let diagonal = grid_obj(5, 4, |u, v| [u + v, v - u]);
    let (_dir, scene) = load(materials, &[("m.obj", &diagonal)]);
    assert_eq!(sets(&scene), [("edges", 31), ("warp_edges", 0), ("weft_edges", 0), ("shear_edges", 24)]);
    let c = &scene.cloths()[0];
    assert_eq!(c.edge_sets[0].elasticity.compliance().get(), 1e-4);
    assert_eq!(c.edge_sets[1].elasticity.compliance().get(), 1e-6);
}

#[test]
fn pin_boxes_and_pin_files_select_the_right_particles() {
    let text = grid_obj(4, 3, |u, v| [u, v]);
    // Top row (y = 0.2): particles 8..12; a box around the left column (x = 0): 0, 4, 8.
    let extra = "pin_box = [\n  { min = [-0.01, 0.19, -1], max = [0.31, 0.21, 1] },\n  \
                 { min = [-0.01, -0.01, -1], max = [0.01, 0.3, 1] },\n]\npin_file = \"pins.txt\"\n";
    let (_dir, scene) = load(extra, &[("m.obj", &text), ("pins.txt", "# a corner\n3\n5 # and one more\n")]);
    assert_eq!(scene.cloths()[0].pins, vec![8, 9, 10, 11, 0, 4, 8, 3, 5]);
    let model = scene.build_model().unwrap();
    let pinned: Vec<usize> =
        model.particles().inv_mass().iter().enumerate().filter(|(_, w)| **w == 0.0).map(|(i, _)| i).collect();
    assert_eq!(pinned, [0, 3, 4, 5, 8, 9, 10, 11]);
}

fn garment() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/garment.toml")
}

#[test]
fn the_garment_validates_with_more_than_two_thousand_triangles() {
    let report = weft_ok(&["validate".as_ref(), garment().as_os_str()]);
    let cloth = report.lines().find(|l| l.starts_with("cloth:")).unwrap();
    let triangles: usize = cloth.split(", ").nth(2).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(triangles > 2000, "{cloth}");
    let scene = load_scene(&garment(), &Limits::default()).unwrap();
    let cloth = &scene.cloths()[0];
    assert_eq!(cloth.triangles.len(), triangles);
    assert_eq!(cloth.uvs.len(), triangles);
    assert!(cloth.kinds.bending.is_some() && cloth.self_collision.is_some());
    // Unpinned: the shirt hangs on the dress form, a mesh collider from the same file.
    assert!(cloth.pins.is_empty() && cloth.kinds.tethers.is_none());
    assert_eq!(scene.mesh_colliders().len(), 1);
    let fields: Vec<&str> = cloth.edge_sets.iter().map(|s| s.field).collect();
    assert_eq!(fields, ["edges", "warp_edges", "weft_edges", "shear_edges"]);
    assert!(cloth.edge_sets.iter().skip(1).all(|s| !s.edges.is_empty()));
}

#[test]
fn the_garment_bakes_a_few_frames() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(garment()).unwrap();
    let obj = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/garment.obj");
    assert!(text.contains("frames = 60 "), "the example's frame count changed");
    let text = text
        .replace("frames = 60 ", "frames = 3 ")
        .replace("mesh = \"garment.obj\"", &format!("mesh = '{}'", obj.display()));
    let scene = dir.path().join("garment.toml");
    fs::write(&scene, text).unwrap();
    let out = dir.path().join("out");
    weft_ok(&[
        "bake".as_ref(),
        scene.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "pc2,usd,obj".as_ref(),
        "-q".as_ref(),
    ]);
    let pc2 = weft::io::read_pc2(&out.join("tshirt.pc2")).unwrap();
    assert_eq!(pc2.sample_count, 4);
    assert!(pc2.positions.iter().flatten().all(|c| c.is_finite()));
    assert_ne!(pc2.sample(0), pc2.sample(3), "the shirt moves");
    assert!(read_one(&out, ".usda").contains("primvars:st"));
    assert!(read_one(&out, ".0003.obj").contains("\nvt "));
}
