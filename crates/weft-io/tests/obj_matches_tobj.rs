//! weft reads OBJ files with its own scanner (`weft_io::obj`), once. This test holds that scanner
//! to another reader, the `tobj` crate, on the example meshes and on hand-written cases: the same
//! objects, the same faces with the same corners (positions and texture coordinates, bit for bit),
//! and a refusal wherever `tobj` refuses.

use std::collections::HashMap;
use std::path::Path;

use weft_io::obj::{ObjMesh, ObjectSelection, parse_obj};

/// One face: the position and (if any) texture coordinate of each corner.
type Polygon = Vec<([u32; 3], Option<[u32; 2]>)>;

fn bits3(p: [f32; 3]) -> [u32; 3] {
    p.map(f32::to_bits)
}

fn bits2(p: [f32; 2]) -> [u32; 2] {
    p.map(f32::to_bits)
}

/// `tobj`'s reading: faces as polygons (no triangulation), positions and texture coordinates
/// indexed apart, polylines and points left out, no material files. `None` if `tobj` refuses.
fn tobj_faces(text: &str) -> Option<Vec<(String, Vec<Polygon>)>> {
    let options = tobj::LoadOptions {
        single_index: false,
        triangulate: false,
        ignore_points: true,
        ignore_lines: true,
    };
    // `tobj` reads a polyline (`l`) of three or more points as a face; weft ignores polylines.
    let text: String = text
        .split('\n')
        .map(|l| if l.split_whitespace().next() == Some("l") { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let mut reader = std::io::Cursor::new(text.as_bytes());
    let (models, _) =
        tobj::load_obj_buf(&mut reader, &options, |_| Err(tobj::LoadError::OpenFileFailed)).ok()?;
    let mut out = Vec::new();
    for model in models {
        let mesh = &model.mesh;
        let arities: Vec<u32> = if mesh.face_arities.is_empty() {
            vec![3; mesh.indices.len() / 3]
        } else {
            mesh.face_arities.clone()
        };
        let with_uvs = !mesh.texcoord_indices.is_empty();
        let mut at = 0usize;
        let mut faces = Vec::new();
        for n in arities {
            let mut face = Polygon::new();
            for _ in 0..n {
                let v = mesh.indices[at] as usize;
                let p = [mesh.positions[3 * v], mesh.positions[3 * v + 1], mesh.positions[3 * v + 2]];
                let uv = with_uvs.then(|| {
                    let t = mesh.texcoord_indices[at] as usize;
                    bits2([mesh.texcoords[2 * t], mesh.texcoords[2 * t + 1]])
                });
                face.push((bits3(p), uv));
                at += 1;
            }
            faces.push(face);
        }
        out.push((model.name, faces));
    }
    Some(out)
}

/// The scanner's faces, rebuilt from its triangles (consecutive triangles of one file line are
/// one face: a triangle, a quad cut along a diagonal, or a fan).
fn weft_faces(mesh: &ObjMesh) -> Vec<(u32, Polygon)> {
    let corner = |t: usize, k: usize| {
        let p = mesh.triangles[t][k] as usize;
        (bits3(mesh.positions[p]), mesh.uvs.get(t).map(|uv| bits2(uv[k])))
    };
    let mut faces = Vec::new();
    let mut t = 0;
    while t < mesh.triangles.len() {
        let line = mesh.triangle_lines[t];
        let mut end = t + 1;
        while end < mesh.triangles.len() && mesh.triangle_lines[end] == line {
            end += 1;
        }
        let face = match end - t {
            1 => vec![corner(t, 0), corner(t, 1), corner(t, 2)],
            2 if mesh.triangles[t][1] == mesh.triangles[t + 1][0] => {
                // a b d + b c d
                vec![corner(t, 0), corner(t, 1), corner(t + 1, 1), corner(t, 2)]
            }
            n => {
                // a fan 0 1 2, 0 2 3, ... (a quad cut along a–c is one too)
                let mut f = vec![corner(t, 0), corner(t, 1)];
                f.extend((0..n).map(|k| corner(t + k, 2)));
                f
            }
        };
        faces.push((line, face));
        t = end;
    }
    faces
}

/// Checks that the scanner and `tobj` read `text` alike: both refuse it, or both read the same
/// objects and faces. Returns whether the scanner read it.
fn agree(name: &str, text: &str) -> bool {
    let tobj = tobj_faces(text);
    let Some(tobj) = tobj else {
        let weft = parse_obj(text.as_bytes(), &ObjectSelection::Only);
        let e =
            weft.err().unwrap_or_else(|| panic!("{name}: tobj refuses the file, weft's scanner reads it"));
        assert!(e.line.is_some(), "{name}: refused without a line: {e}");
        return false;
    };
    let names: Vec<String> = {
        let mut seen = Vec::new();
        for (n, faces) in &tobj {
            if !faces.is_empty() && !seen.contains(n) {
                seen.push(n.clone());
            }
        }
        seen
    };
    let weft = match parse_obj(text.as_bytes(), &ObjectSelection::Named(names.clone())) {
        Ok(mesh) => mesh,
        Err(e) => {
            // The scanner is stricter than tobj on purpose in places (forward references, faces of
            // fewer than 3 corners, non-finite numbers, repeated vertices): a refusal is fine as
            // long as it names a line.
            assert!(e.line.is_some(), "{name}: refused without a line: {e}");
            return false;
        }
    };
    assert_eq!(weft.objects, names, "{name}: objects");
    let theirs: Vec<&Polygon> = tobj.iter().flat_map(|(_, faces)| faces).collect();
    let ours = weft_faces(&weft);
    assert_eq!(ours.len(), theirs.len(), "{name}: number of faces");
    let uvs_everywhere = !weft.uvs.is_empty();
    for ((line, ours), theirs) in ours.iter().zip(theirs) {
        assert_eq!(ours.len(), theirs.len(), "{name}: corners of the face on line {line}");
        for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
            assert_eq!(a.0, b.0, "{name}: position of corner {k} of the face on line {line}");
            if uvs_everywhere {
                assert_eq!(a.1, b.1, "{name}: texture coordinate of corner {k} of the face on line {line}");
            }
        }
    }
    true
}

#[test]
fn the_example_meshes_read_alike() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut read = HashMap::new();
    for file in ["examples/garment.obj", "examples/pile.obj", "examples/cape/body.obj"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        read.insert(file, agree(file, &text));
    }
    assert!(read.values().all(|&r| r), "every example mesh is read: {read:?}");
}

#[test]
fn hand_written_cases_read_alike() {
    let good = [
        ("triangle", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
        ("quad, short diagonal b–d", "v 0 0 0\nv 1 0 0\nv 3 3 0\nv 0 1 0\nf 1 2 3 4\n"),
        ("quad, short diagonal a–c", "v 0 0 0\nv 3 0 0\nv 1 1 0\nv 0 3 0\nf 1 2 3 4\n"),
        ("pentagon", "v 0 0 0\nv 1 0 0\nv 2 1 0\nv 1 2 0\nv 0 1 0\nf 1 2 3 4 5\n"),
        (
            "uvs and normals",
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nvn 0 0 1\nf 1/1/1 2/2/1 3/3/1\n",
        ),
        ("v//vn", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1\n"),
        ("negative references", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nf -3/-3 -2/-2 -1/-1\n"),
        ("w divides", "v 0 0 0 2\nv 2 0 0 2\nv 0 2 0 0.5\nf 1 2 3\n"),
        ("colours", "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nf 1 2 3\n"),
        ("crlf and comments", "# a comment\r\nv 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n"),
        (
            "objects and groups",
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\no a\nf 1 2 3\ng b c\nf 2 4 3\no a\nf 1 2 4\n",
        ),
        ("faces before any object", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\no named\nf 2 4 3\n"),
        ("polylines and points ignored", "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\np 1\nf 1 2 3\n"),
        ("materials ignored", "mtllib a.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl red\ns 1\nf 1 2 3\n"),
        ("unused vertices", "v 9 9 9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 2 3 4\n"),
        (
            "uv seam",
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nvt 1 1\nvt 0.5 0.5\nf 1/1 2/2 3/3\nf 2/5 4/4 3/3\n",
        ),
    ];
    for (name, text) in good {
        assert!(agree(name, text), "{name}: both read it");
    }
    // Refused by both readers.
    let bad = [
        ("a position that is not a number", "v 0 x 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
        ("w = 0", "v 0 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
        ("five numbers on a v", "v 0 0 0 1 1\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"),
        ("a texture coordinate that is not a number", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 x\nf 1 2 3\n"),
        ("a normal that is not a number", "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 x\nf 1 2 3\n"),
        ("a corner that is not a number", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n"),
        ("four parts in a corner", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1/1/1 2 3\n"),
        ("a vertex past the end", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n"),
        ("reference 0", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"),
        ("usemtl without a name", "v 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl\nf 1 2 3\n"),
        ("a colour that is not a number", "v 0 0 0 1 0 0\nv 1 0 0 1 0 0\nv 0 1 0 x y z\nf 1 2 3\n"),
    ];
    for (name, text) in bad {
        assert!(!agree(name, text), "{name}: refused");
        let e = parse_obj(text.as_bytes(), &ObjectSelection::Only).unwrap_err();
        assert!(e.line.is_some(), "{name}: the error names a line: {e}");
    }
}
