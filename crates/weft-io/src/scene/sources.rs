//! Where the parts of a cloth that are not written in the scene came from: the OBJ lines behind a
//! mesh cloth's particles, triangles and edges, and the pin file lines behind its pins, so that a
//! model error about `triangles[37]` or `pins[5]` points at the face or the line that made it.

/// The lines behind a cloth's generated parts.
#[derive(Debug, Clone, Default)]
pub(super) struct ClothSource {
    /// For a mesh cloth: the OBJ lines.
    pub(super) mesh: Option<MeshLines>,
    /// Where each run of pins came from, in order (the scene's own `pins` first).
    pub(super) pins: Vec<PinRun>,
    /// For a cloth with a `render_mesh`: its OBJ lines (vertices only).
    pub(super) render: Option<MeshLines>,
}

/// The OBJ lines behind a mesh cloth.
#[derive(Debug, Clone, Default)]
pub(super) struct MeshLines {
    /// The OBJ file as messages show it.
    pub(super) file: String,
    /// The OBJ vertex number (from 1) of each particle.
    pub(super) vertex_numbers: Vec<u32>,
    /// The line of each particle's `v`.
    pub(super) vertex_lines: Vec<u32>,
    /// The line of the face each triangle was cut from.
    pub(super) triangle_lines: Vec<u32>,
    /// For each edge list (`edges`, `warp_edges`, `weft_edges`, `shear_edges`), the line of the
    /// face each edge was found in.
    pub(super) edge_lines: Vec<(&'static str, Vec<u32>)>,
}

/// Pins `start..end` of a cloth and where they came from.
#[derive(Debug, Clone)]
pub(super) struct PinRun {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The pin file and the line of each pin, or `None` for pins from a scene key.
    pub(super) file: Option<(String, Vec<u32>)>,
}

/// A place outside the scene file: a file, a line, and the field as a message shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Outside {
    pub(super) file: String,
    pub(super) line: u32,
    pub(super) shown: String,
}

impl ClothSource {
    /// Where `field[index]` came from, if from outside the scene file.
    pub(super) fn locate(&self, field: &str, index: Option<usize>) -> Option<Outside> {
        let i = index?;
        if field == "pins" {
            let run = self.pins.iter().find(|r| (r.start..r.end).contains(&i))?;
            let (file, lines) = run.file.as_ref()?;
            let line = *lines.get(i - run.start)?;
            return Some(Outside { file: file.clone(), line, shown: format!("pins[{i}] (from pin_file)") });
        }
        if field == "render_mesh" {
            let render = self.render.as_ref()?;
            let vertex = render.vertex_numbers.get(i)?;
            let line = *render.vertex_lines.get(i)?;
            return Some(Outside {
                file: render.file.clone(),
                line,
                shown: format!("render_mesh vertex {vertex}"),
            });
        }
        let mesh = self.mesh.as_ref()?;
        let at = |line: u32, shown: String| Some(Outside { file: mesh.file.clone(), line, shown });
        match field {
            "positions" | "velocities" => {
                let vertex = mesh.vertex_numbers.get(i)?;
                at(*mesh.vertex_lines.get(i)?, format!("{field}[{i}] (OBJ vertex {vertex})"))
            }
            "triangles" | "uvs" => at(*mesh.triangle_lines.get(i)?, format!("{field}[{i}] (from this face)")),
            _ => {
                let (_, lines) = mesh.edge_lines.iter().find(|(f, _)| *f == field)?;
                at(*lines.get(i)?, format!("{field}[{i}] (from this face)"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_mesh_parts_and_file_pins() {
        let source = ClothSource {
            mesh: Some(MeshLines {
                file: "m.obj".into(),
                vertex_numbers: vec![1, 3],
                vertex_lines: vec![2, 4],
                triangle_lines: vec![9, 9, 10],
                edge_lines: vec![("edges", vec![9, 10]), ("shear_edges", vec![10])],
            }),
            pins: vec![
                PinRun { start: 0, end: 2, file: None },
                PinRun { start: 2, end: 3, file: Some(("p.txt".into(), vec![7])) },
            ],
            render: Some(MeshLines {
                file: "r.obj".into(),
                vertex_numbers: vec![1, 2, 5],
                vertex_lines: vec![3, 4, 7],
                ..MeshLines::default()
            }),
        };
        let at = |f, i| source.locate(f, i).map(|o| (o.file, o.line, o.shown));
        assert_eq!(at("positions", Some(1)), Some(("m.obj".into(), 4, "positions[1] (OBJ vertex 3)".into())));
        assert_eq!(at("triangles", Some(2)).unwrap().1, 10);
        assert_eq!(at("shear_edges", Some(0)).unwrap().1, 10);
        assert_eq!(at("pins", Some(2)), Some(("p.txt".into(), 7, "pins[2] (from pin_file)".into())));
        assert_eq!(at("pins", Some(1)), None);
        assert_eq!(at("triangles", None), None);
        assert_eq!(at("triangles", Some(3)), None);
        assert_eq!(at("bending_compliance", Some(0)), None);
        assert_eq!(at("render_mesh", Some(2)), Some(("r.obj".into(), 7, "render_mesh vertex 5".into())));
        assert_eq!(at("render_mesh", None), None);
    }
}
