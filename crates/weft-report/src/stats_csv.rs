//! Reading a bake's `stats.csv` (its columns: weft-bake's `stats` module and docs/caches.md).
//!
//! Every field is a number or empty; an empty field is "not measured in this frame" (`--stats
//! light` or `off`) and stays `None`, never 0. Columns this reader does not know are kept, so a
//! newer file still reads.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::ReportError;

/// Name of the statistics file in a bake folder (weft-bake's `STATS_FILE`; weft-bake is no
/// dependency of the report, so a test checks that the two agree).
pub const STATS_FILE: &str = "stats.csv";

/// The rows of a `stats.csv`, column by column.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsTable {
    /// The file read.
    pub path: PathBuf,
    columns: Vec<String>,
    rows: Vec<Vec<Option<f64>>>,
}

/// The columns every `stats.csv` must have.
const REQUIRED: [&str; 2] = ["frame", "time_s"];

impl StatsTable {
    /// Reads and checks `path`.
    pub fn read(path: &Path) -> Result<Self, ReportError> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReportError::input(path, "no such file (is the folder a weft bake's output?)"));
            }
            Err(e) => return Err(ReportError::input(path, format!("cannot read: {e}"))),
        };
        Self::parse(&text, path)
    }

    /// Parses the text of a `stats.csv`; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ReportError> {
        let mut lines = text.lines().enumerate();
        let columns: Vec<String> = match lines.next() {
            Some((_, header)) if !header.trim().is_empty() => {
                header.split(',').map(|c| c.trim().to_string()).collect()
            }
            _ => return Err(ReportError::at_line(path, 1, "no header line")),
        };
        for name in REQUIRED {
            if !columns.iter().any(|c| c == name) {
                return Err(ReportError::at_line(path, 1, format!("the header has no column `{name}`")));
            }
        }
        let mut rows = Vec::new();
        for (i, line) in lines {
            let number = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != columns.len() {
                return Err(ReportError::at_line(
                    path,
                    number,
                    format!("{} fields, but the header has {}", fields.len(), columns.len()),
                ));
            }
            let row = fields
                .iter()
                .zip(&columns)
                .map(|(field, column)| {
                    let field = field.trim();
                    if field.is_empty() {
                        if REQUIRED.contains(&column.as_str()) {
                            return Err(ReportError::at_line(path, number, format!("`{column}` is empty")));
                        }
                        return Ok(None);
                    }
                    field.parse::<f64>().map(Some).map_err(|_| {
                        ReportError::at_line(path, number, format!("`{column}` is `{field}`, not a number"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            rows.push(row);
        }
        Ok(StatsTable { path: path.to_path_buf(), columns, rows })
    }

    /// Rows (frames) in the file.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the file has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether the header has column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c == name)
    }

    /// Column `name`, one value per row (`None`: not measured in that frame); `None` if the
    /// header lacks the column.
    pub fn column(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let i = self.columns.iter().position(|c| c == name)?;
        Some(self.rows.iter().map(|r| r[i]).collect())
    }

    /// `(x, y)` for every row where column `name` has a finite value: `x` from column `x` (a
    /// required column, so always there), `y` the value times `scale`. Empty if the column is
    /// missing or never measured.
    pub fn points(&self, x: &str, name: &str, scale: f64) -> Vec<(f64, f64)> {
        let (Some(xs), Some(ys)) = (self.column(x), self.column(name)) else {
            return Vec::new();
        };
        xs.into_iter()
            .zip(ys)
            .filter_map(|(x, y)| Some((x?, y? * scale)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "frame,time_s,substeps,intersecting_triangle_pairs,max_stretch";

    #[test]
    fn empty_fields_are_not_measured() {
        let text = format!("{HEADER}\n1,0.1,5,3,0.01\n2,0.2,5,,0.02\n3,0.3,6,0,0.0\n");
        let t = StatsTable::parse(&text, Path::new("s.csv")).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t.column("intersecting_triangle_pairs").unwrap(), [Some(3.0), None, Some(0.0)]);
        assert_eq!(t.points("time_s", "intersecting_triangle_pairs", 1.0), [(0.1, 3.0), (0.3, 0.0)]);
        assert_eq!(t.points("frame", "max_stretch", 100.0), [(1.0, 1.0), (2.0, 2.0), (3.0, 0.0)]);
        assert!(t.column("volume_max_rel_error").is_none());
    }

    #[test]
    fn bad_rows_name_the_file_and_line() {
        let bad = |text: &str| StatsTable::parse(text, Path::new("d/stats.csv")).unwrap_err().to_string();
        assert_eq!(
            bad(&format!("{HEADER}\n1,0.1,5,3,0.01\n2,0.2,x,,0.02\n")),
            "d/stats.csv:3: `substeps` is `x`, not a number"
        );
        assert_eq!(bad(&format!("{HEADER}\n1,0.1,5\n")), "d/stats.csv:2: 3 fields, but the header has 5");
        assert_eq!(bad(&format!("{HEADER}\n,0.1,5,3,0.01\n")), "d/stats.csv:2: `frame` is empty");
        assert_eq!(bad("a,b\n"), "d/stats.csv:1: the header has no column `frame`");
        assert_eq!(bad(""), "d/stats.csv:1: no header line");
    }
}
