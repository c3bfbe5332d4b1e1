//! "did you mean ...?": the name nearest to a misspelt key or variant, for the one-line message of
//! an unknown key (`stretch_compliace`) in any table of a scene.

/// The TOML reader's message for an unknown key or variant with the nearest expected name put
/// after the unknown one: "unknown field `stretch_compliace` (did you mean
/// `stretch_compliance`?), expected one of ...". Any other message, or one whose unknown name is
/// near no expected name ([`nearest`]), comes back as it is.
pub(super) fn with_suggestion(message: &str) -> String {
    for what in ["unknown field `", "unknown variant `"] {
        let Some(start) = message.find(what) else { continue };
        let name_start = start + what.len();
        let Some(name_len) = message[name_start..].find('`') else { continue };
        let name = &message[name_start..name_start + name_len];
        let after_name = name_start + name_len + 1;
        let Some(list_at) = message[after_name..].find("expected ") else { continue };
        let list = &message[after_name + list_at + "expected ".len()..];
        let list = list.strip_prefix("one of ").unwrap_or(list);
        let expected = list.split(", ").filter_map(|n| n.strip_prefix('`')?.strip_suffix('`'));
        if let Some(near) = nearest(name, expected) {
            return format!("{} (did you mean `{near}`?){}", &message[..after_name], &message[after_name..]);
        }
    }
    message.to_string()
}

/// The first of `candidates` nearest to `word` by edit distance (insertions, deletions,
/// substitutions and swaps of two neighbouring characters), if it is near enough to be a
/// misspelling: at most 1 edit for a word of up to 4 characters, 2 up to 9, 3 beyond.
pub(super) fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = word.chars().count();
    let most = match len {
        0..=4 => 1,
        5..=9 => 2,
        _ => 3,
    };
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let d = distance(word, candidate);
        if d <= most && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The optimal-string-alignment distance between `a` and `b`, counted in characters.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two rows back (for swaps), the last and the current.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("stretch_compliace", "stretch_compliance"), 1);
        assert_eq!(distance("stretch_complaince", "stretch_compliance"), 1, "a swap is one edit");
        assert_eq!(distance("frams", "frames"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("foo", "fps"), 2);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn only_near_names_are_suggested() {
        let keys = ["fps", "frames", "substeps", "stretch_compliance", "stretch_stiffness"];
        assert_eq!(nearest("frams", keys), Some("frames"));
        assert_eq!(nearest("stretch_compliace", keys), Some("stretch_compliance"));
        assert_eq!(nearest("foo", keys), None, "two edits in three letters is another word");
        assert_eq!(nearest("substepz", keys), Some("substeps"));
        assert_eq!(nearest("gravity", keys), None);
    }

    #[test]
    fn the_suggestion_follows_the_unknown_name() {
        assert_eq!(
            with_suggestion("unknown field `frams`, expected one of `fps`, `frames`"),
            "unknown field `frams` (did you mean `frames`?), expected one of `fps`, `frames`"
        );
        assert_eq!(
            with_suggestion("unknown variant `top-lef`, expected one of `top-left`, `top-right`"),
            "unknown variant `top-lef` (did you mean `top-left`?), expected one of `top-left`, `top-right`"
        );
        assert_eq!(
            with_suggestion("unknown field `tme`, expected `time`"),
            "unknown field `tme` (did you mean `time`?), expected `time`"
        );
        let far = "unknown field `foo`, expected one of `fps`, `frames`";
        assert_eq!(with_suggestion(far), far);
        assert_eq!(with_suggestion("duplicate key"), "duplicate key");
    }
}
