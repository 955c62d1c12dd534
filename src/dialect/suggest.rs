//! Suggestions: the nearest known name by edit distance, for "did you mean
//! …?" hints on unknown methods, helpers and operators.

/// Levenshtein distance, compared case-insensitively so `updateone` finds
/// `updateOne`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate, if it is close enough to be a plausible typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (name.chars().count() / 3).clamp(1, 4);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("updateone", "updateOne"), 0);
    }

    #[test]
    fn suggests_near_names_only() {
        let names = ["updateOne", "updateMany", "insertOne"];
        assert_eq!(suggest("updateOn", names).as_deref(), Some("updateOne"));
        assert_eq!(suggest("insrtOne", names).as_deref(), Some("insertOne"));
        assert_eq!(suggest("frobnicate", names), None);
    }
}
