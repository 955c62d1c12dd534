//! Places in text: the 1-based line and column (in characters) of a byte
//! offset, as every error about a file names it (`file:line:col`).

/// The line and column of byte `offset` of `text`; an offset past the end,
/// or inside a character, counts from the last whole character before it.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::line_col;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "ab\n中文x\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 2), (1, 3));
        assert_eq!(line_col(text, 3), (2, 1));
        // After two three-byte characters: column 3.
        assert_eq!(line_col(text, 9), (2, 3));
        // Inside a character, and past the end.
        assert_eq!(line_col(text, 4), (2, 1));
        assert_eq!(line_col(text, 99), (3, 1));
    }
}
