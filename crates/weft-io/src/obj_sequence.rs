//! OBJ sequences: one Wavefront OBJ file per sample, `NAME.0000.obj`, `NAME.0001.obj`, ...
//!
//! The frame number is zero-padded to 4 digits, or more if the last sample needs them (so the
//! names sort in frame order). Each file is one object, `o NAME` (so an importer names it after
//! the cloth, not the file), with a `v x y z` line per point (m). If the mesh has faces, it also
//! has a `vn x y z` line per point, the smooth normal of that sample ([`weft_core::normals`]), the
//! same number as its `v`; `s 1` (smooth shading for readers that ignore `vn`); and an `f` line
//! per face as given (triangles, quads, n-gons; 1-based indices, as OBJ counts), each corner
//! `v//vn`. A mesh with UVs also gets its distinct texture coordinates as `vt u v` lines (in
//! order of first use) and corners `v/vt/vn`, so a UV seam is kept without splitting a point.
//! Each frame is written to `NAME.NNNN.obj.partial`; [`CacheWriter::finish`] renames every frame
//! once all samples are written, then removes the frames of an earlier sequence of the same name
//! that this one did not replace (`NAME.` + digits + `.obj` beyond the new last frame, or with
//! another width), so a folder never mixes two bakes.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use weft_core::polygons::Polygons;

use crate::cache::{CacheMark, CacheSpec, CacheWriter, SampleCheck};
use crate::staged::{self, Staged, with_path, write_all};
use weft_core::normals::vertex_normals;

/// Digits of the frame number in the file names of a sequence of `samples` samples (at least 4).
///
/// ```
/// assert_eq!(weft_io::obj_sequence::frame_digits(10), 4);
/// assert_eq!(weft_io::obj_sequence::frame_digits(10_001), 5);
/// ```
pub fn frame_digits(samples: u32) -> usize {
    (samples.saturating_sub(1).max(1).ilog10() as usize + 1).max(4)
}

/// Streams an OBJ sequence, one file per sample.
#[derive(Debug)]
pub struct ObjSequenceWriter {
    staged: Staged,
    dir: PathBuf,
    name: String,
    digits: usize,
    check: SampleCheck,
    /// The `vt`, `s` and `f` lines, made once and appended to every frame.
    faces: String,
    /// The faces, for the normals.
    polygons: Polygons,
    sums: Vec<[f64; 3]>,
    normals: Vec<[f32; 3]>,
    text: String,
}

impl ObjSequenceWriter {
    /// Checks the spec; files are created as samples arrive.
    pub fn create(spec: &CacheSpec<'_>) -> io::Result<Self> {
        spec.validate()?;
        let mut faces = String::new();
        let polygons = spec.polygons;
        let (values, uv_corners) = spec.indexed_uvs();
        for [u, v] in values {
            let _ = writeln!(faces, "vt {u} {v}");
        }
        if !polygons.is_empty() {
            faces.push_str("s 1\n");
        }
        let mut corner = 0;
        for face in polygons.faces() {
            faces.push('f');
            for &p in face {
                let p = p + 1;
                match uv_corners.get(corner) {
                    Some(t) => {
                        let _ = write!(faces, " {p}/{}/{p}", t + 1);
                    }
                    None => {
                        let _ = write!(faces, " {p}//{p}");
                    }
                }
                corner += 1;
            }
            faces.push('\n');
        }
        Ok(ObjSequenceWriter {
            staged: Staged::default(),
            dir: spec.dir.to_path_buf(),
            name: spec.name.to_string(),
            digits: frame_digits(spec.samples),
            check: SampleCheck::new(spec),
            faces,
            polygons: polygons.clone(),
            sums: Vec::new(),
            normals: Vec::new(),
            text: String::new(),
        })
    }

    /// Takes over the frames an earlier run left (see [`crate::cache::resume_cache`]): the
    /// temporary files of samples `0..mark.samples` must all be there.
    pub(crate) fn resume(spec: &CacheSpec<'_>, mark: &CacheMark) -> io::Result<Self> {
        let mut writer = ObjSequenceWriter::create(spec)?;
        for k in 0..mark.samples {
            writer.staged.adopt(writer.frame_path(k))?;
        }
        writer.check = SampleCheck::resumed(spec, mark.samples);
        Ok(writer)
    }

    /// The final path of sample `k`.
    pub fn frame_path(&self, k: u32) -> PathBuf {
        self.dir.join(format!("{}.{:0width$}.obj", self.name, k, width = self.digits))
    }
}

impl CacheWriter for ObjSequenceWriter {
    fn mark(&mut self) -> io::Result<CacheMark> {
        // Each frame is closed (flushed and synced) as it is written.
        Ok(CacheMark { samples: self.check.written(), bytes: 0, state: Vec::new() })
    }
    fn write_sample(&mut self, positions: &[[f32; 3]]) -> io::Result<()> {
        let k = self.check.next(positions)?;
        let path = self.frame_path(k);
        let text = &mut self.text;
        text.clear();
        let _ = writeln!(text, "# weft cloth '{}', frame {k}", self.name);
        let _ = writeln!(text, "o {}", self.name);
        for p in positions {
            let _ = writeln!(text, "v {} {} {}", p[0], p[1], p[2]);
        }
        if !self.polygons.is_empty() {
            vertex_normals(positions, &self.polygons, &mut self.sums, &mut self.normals);
            for n in &self.normals {
                let _ = writeln!(text, "vn {} {} {}", n[0], n[1], n[2]);
            }
        }
        let mut out = self.staged.create(path.clone())?;
        write_all(&mut out, text.as_bytes(), &path)?;
        write_all(&mut out, self.faces.as_bytes(), &path)?;
        staged::close(out).map_err(|e| with_path(e, &path))?;
        self.check.done();
        Ok(())
    }

    fn suspend(mut self: Box<Self>) {
        self.staged.keep();
    }

    fn finish(self: Box<Self>) -> io::Result<Vec<PathBuf>> {
        self.check.complete()?;
        let (dir, name) = (self.dir.clone(), self.name.clone());
        let written = self.staged.commit()?;
        remove_stale_frames(&dir, &name, &written)?;
        Ok(written)
    }
}

/// True when `file` is a frame of the sequence `name`: `name.` + at least 4 digits + `.obj`.
fn is_frame_of(file: &str, name: &str) -> bool {
    file.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_suffix(".obj"))
        .is_some_and(|digits| digits.len() >= 4 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the frames of sequence `name` in `dir` that are not among `written`.
fn remove_stale_frames(dir: &Path, name: &str, written: &[PathBuf]) -> io::Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| with_path(e, dir))?;
    for entry in entries {
        let path = entry.map_err(|e| with_path(e, dir))?.path();
        let stale = path.file_name().and_then(|f| f.to_str()).is_some_and(|f| is_frame_of(f, name))
            && !written.contains(&path);
        if stale {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(with_path(e, &path)),
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{CacheFormat, create_cache};

    #[test]
    fn names_and_contents() {
        let dir = tempfile::tempdir().unwrap();
        let triangle = Polygons::from_triangles(&[[0, 1, 2]], &[]).unwrap();
        let spec = CacheSpec {
            dir: dir.path(),
            name: "flag",
            polygons: &triangle,
            point_count: 3,
            fps: 24.0,
            samples: 3,
        };
        let mut w = create_cache(CacheFormat::ObjSequence, &spec).unwrap();
        for k in 0..3 {
            w.write_sample(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, k as f32 * 0.5]]).unwrap();
        }
        assert!(dir.path().join("flag.0002.obj.partial").exists());
        assert!(!dir.path().join("flag.0002.obj").exists());
        let files = w.finish().unwrap();
        let names: Vec<_> =
            files.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_string()).collect();
        assert_eq!(names, ["flag.0000.obj", "flag.0001.obj", "flag.0002.obj"]);
        assert_eq!(
            std::fs::read_to_string(&files[0]).unwrap(),
            "# weft cloth 'flag', frame 0\no flag\nv 0 0 0\nv 1 0 0\nv 1 1 0\n\
             vn 0 0 1\nvn 0 0 1\nvn 0 0 1\ns 1\nf 1//1 2//2 3//3\n"
        );
        // Frame 2 is tilted about x by 45°: (0, −1, 1)/√2.
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let vn = format!("vn 0 {} {}\n", -h, h);
        assert_eq!(
            std::fs::read_to_string(&files[2]).unwrap(),
            format!(
                "# weft cloth 'flag', frame 2\no flag\nv 0 0 0\nv 1 0 0\nv 1 1 1\n{vn}{vn}{vn}s 1\nf 1//1 2//2 3//3\n"
            )
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn quads_stay_quads_with_shared_texture_coordinates() {
        let dir = tempfile::tempdir().unwrap();
        // A quad and a triangle on a UV seam: the shared corner 0 has two UVs.
        let uvs = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.0], [1.0, 1.0], [1.0, 0.0]];
        let polygons = Polygons::new(vec![4, 3], vec![0, 1, 2, 3, 0, 2, 4], uvs).unwrap();
        let spec = CacheSpec {
            dir: dir.path(),
            name: "quad",
            polygons: &polygons,
            point_count: 5,
            fps: 24.0,
            samples: 1,
        };
        let mut w = create_cache(CacheFormat::ObjSequence, &spec).unwrap();
        w.write_sample(&[
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.5, 0.5, 0.0],
        ])
        .unwrap();
        let files = w.finish().unwrap();
        // The triangle has no area (its corners are on a line): point 4, on no other face, takes
        // the mesh's normal.
        assert_eq!(
            std::fs::read_to_string(&files[0]).unwrap(),
            "# weft cloth 'quad', frame 0\no quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 0.5 0\n\
             vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n\
             vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0\ns 1\nf 1/1/1 2/2/2 3/3/3 4/4/4\nf 1/5/1 3/3/3 5/2/5\n"
        );
    }

    #[test]
    fn tobj_reads_the_faces_normals_and_uvs_back() {
        let dir = tempfile::tempdir().unwrap();
        // Two quads and a pentagon around a bent strip, with UVs.
        let positions = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [2.0, 0.5, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [2.0, 0.5, 1.0],
            [3.0, 1.0, 0.5],
        ];
        let corners = vec![0, 3, 4, 1, 1, 4, 5, 2, 2, 5, 6];
        let uvs: Vec<[f32; 2]> =
            corners.iter().map(|&p| [positions[p as usize][0] / 3.0, positions[p as usize][2]]).collect();
        let polygons = Polygons::new(vec![4, 4, 3], corners.clone(), uvs.clone()).unwrap();
        let spec = CacheSpec {
            dir: dir.path(),
            name: "strip",
            polygons: &polygons,
            point_count: 7,
            fps: 24.0,
            samples: 1,
        };
        let mut w = create_cache(CacheFormat::ObjSequence, &spec).unwrap();
        w.write_sample(&positions).unwrap();
        let files = w.finish().unwrap();
        let options = tobj::LoadOptions { triangulate: false, single_index: false, ..Default::default() };
        let (models, _) = tobj::load_obj(&files[0], &options).unwrap();
        assert_eq!(models.len(), 1);
        assert_eq!(models[0].name, "strip");
        let mesh = &models[0].mesh;
        assert_eq!(mesh.face_arities, vec![4, 4, 3]);
        // tobj numbers the points in order of first use: compare what the corners refer to.
        let at = |values: &[f32], i: u32| {
            [values[3 * i as usize], values[3 * i as usize + 1], values[3 * i as usize + 2]]
        };
        let read: Vec<[f32; 3]> = mesh.indices.iter().map(|&i| at(&mesh.positions, i)).collect();
        let given: Vec<[f32; 3]> = corners.iter().map(|&p| positions[p as usize]).collect();
        assert_eq!(read, given);
        let mut expected = Vec::new();
        vertex_normals(&positions, &polygons, &mut Vec::new(), &mut expected);
        assert_eq!(mesh.normal_indices.len(), corners.len());
        for (&n, &p) in mesh.normal_indices.iter().zip(&corners) {
            let n = at(&mesh.normals, n);
            assert!((n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0).abs() < 1e-6, "{n:?}");
            assert_eq!(n, expected[p as usize], "point {p}");
            // The strip is wound to face up.
            assert!(n[1] > 0.0, "point {p}: {n:?}");
        }
        let read_uvs: Vec<[f32; 2]> = mesh
            .texcoord_indices
            .iter()
            .map(|&t| [mesh.texcoords[2 * t as usize], mesh.texcoords[2 * t as usize + 1]])
            .collect();
        assert_eq!(read_uvs, uvs);
    }

    #[test]
    fn points_only_have_no_normals_or_faces() {
        let dir = tempfile::tempdir().unwrap();
        let spec = CacheSpec {
            dir: dir.path(),
            name: "p",
            polygons: &Polygons::EMPTY,
            point_count: 2,
            fps: 24.0,
            samples: 1,
        };
        let mut w = create_cache(CacheFormat::ObjSequence, &spec).unwrap();
        w.write_sample(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]).unwrap();
        let files = w.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(&files[0]).unwrap(),
            "# weft cloth 'p', frame 0\no p\nv 0 0 0\nv 1 0 0\n"
        );
    }

    #[test]
    fn a_shorter_bake_removes_the_frames_it_did_not_replace() {
        let dir = tempfile::tempdir().unwrap();
        let write = |samples: u32| {
            let triangle = Polygons::from_triangles(&[[0, 1, 2]], &[]).unwrap();
            let spec = CacheSpec {
                dir: dir.path(),
                name: "flag",
                polygons: &triangle,
                point_count: 3,
                fps: 24.0,
                samples,
            };
            let mut w = create_cache(CacheFormat::ObjSequence, &spec).unwrap();
            for _ in 0..samples {
                w.write_sample(&[[0.0; 3]; 3]).unwrap();
            }
            w.finish().unwrap()
        };
        write(5);
        for other in ["flag.0007.txt", "flag.12.obj", "flagpole.0001.obj", "flag.0001.obj.bak"] {
            std::fs::write(dir.path().join(other), "keep").unwrap();
        }
        let written = write(2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "flag.0000.obj",
                "flag.0001.obj",
                "flag.0001.obj.bak",
                "flag.0007.txt",
                "flag.12.obj",
                "flagpole.0001.obj"
            ]
        );
        assert_eq!(written.len(), 2);
    }

    #[test]
    fn digits_grow_with_the_sequence() {
        assert_eq!(frame_digits(0), 4);
        assert_eq!(frame_digits(1), 4);
        assert_eq!(frame_digits(10_000), 4);
        assert_eq!(frame_digits(10_001), 5);
        let spec = CacheSpec {
            dir: std::path::Path::new("out"),
            name: "c",
            polygons: &Polygons::EMPTY,
            point_count: 1,
            fps: 24.0,
            samples: 100_001,
        };
        let w = ObjSequenceWriter::create(&spec).unwrap();
        assert_eq!(w.frame_path(7), std::path::Path::new("out/c.000007.obj"));
    }
}
