//! [`KindInfo`]: what the output says of a constraint kind — its name, the unit of its residual,
//! its `stats.csv` columns with their plots, and its line of the bake summary. Every list of kinds
//! in the output (the `stats.csv` header and rows, `weft report`'s constraint-error panels,
//! `weft validate`, the summary) is made from these, in registry order.

/// What the output says of one constraint kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindInfo {
    /// The kind's name in text meant for people (`"bending"`, `"tethers"`).
    pub name: &'static str,
    /// The unit of its residual `|C|` in the summary (`"rad"`, `"m beyond bound"`).
    pub unit: &'static str,
    /// Its columns in `stats.csv`, in order (after the columns of the kinds before it).
    pub columns: &'static [Column],
    /// Its line of the bake summary.
    pub summary: SummaryLine,
    /// `[[cloth]]` items (TOML) that turn the kind on in a cloth with triangles and pins, for
    /// tests and examples: the generic tests of every kind build scenes with them. Empty for a
    /// kind every cloth has (distance) or whose keys the scene reader handles itself (a phased
    /// kind).
    pub example: &'static [&'static str],
}

/// One `stats.csv` column of a kind's residual after a frame measured fully.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The column's name in the header (`"bending_max_abs_c_rad"`: the unit is part of it).
    pub name: &'static str,
    /// Which figure of the residual it holds.
    pub value: Figure,
    /// How `weft report` plots it, if it does.
    pub plot: Option<Plot>,
}

/// A figure of a kind's residual: `|C|` over its constraints after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// The largest `|C|`, in the kind's unit.
    MaxAbs,
    /// The mean `|C|`, in the kind's unit.
    MeanAbs,
    /// The largest `|C|` relative to the constraint's scale (dimensionless).
    MaxRel,
}

/// A panel of `weft report`'s constraint-error plot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plot {
    /// The panel's title.
    pub title: &'static str,
    /// The label of its value axis, with the unit plotted.
    pub axis: &'static str,
    /// The column's values are multiplied by this to be plotted in that unit (1000: m to mm).
    pub scale: f64,
}

/// What the bake summary says of a kind's residual after the last frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryLine {
    /// `final NAME |C|: max, mean` in the kind's unit, and the largest relative `|C|` as the
    /// strain in %.
    AbsAndStrain,
    /// `final NAME |C|: max, mean` in the kind's unit, with its degenerate projections.
    Abs,
    /// `final NAME error`: the largest relative `|C|` in % of the target.
    RelativeError,
    /// Nothing (a kind with no residual).
    None,
}
