//! Whether a line (or lines) typed at the prompt is a whole statement or
//! goes on in the next line, decided as Node's REPL does: a `(`, `[` or
//! `{` still open, a block comment or template literal not closed, or a
//! string whose line ends in a continuation backslash make it incomplete.
//! Brackets inside strings, comments, template literals and regular
//! expressions do not count. Anything else, errors included, is complete:
//! running it reports the error with its place instead of waiting for
//! lines that cannot help.

/// True when `src` can run as it is.
pub fn is_complete(src: &str) -> bool {
    let chars: Vec<char> = src.chars().collect();
    let mut open: Vec<char> = Vec::new();
    // The last significant character, to tell a regex from a division.
    let mut prev: Option<char> = None;
    let mut prev_word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                match find(&chars, i + 2, "*/") {
                    Some(end) => i = end + 2,
                    None => return false,
                }
                continue;
            }
            '/' if regex_may_start(prev, &prev_word) => {
                i += 1;
                let mut class = false;
                while i < chars.len() && chars[i] != '\n' {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => class = true,
                        ']' => class = false,
                        '/' if !class => break,
                        _ => {}
                    }
                    i += 1;
                }
                prev = Some('a');
                prev_word.clear();
            }
            '\'' | '"' => {
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' {
                        i += 1;
                    } else if chars[i] == '\n' {
                        return true;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    // An unterminated string: incomplete only when its
                    // line ends in a continuation backslash.
                    let trailing = src.chars().rev().take_while(|&c| c == '\\').count();
                    return trailing % 2 == 0;
                }
                prev = Some('a');
                prev_word.clear();
            }
            '`' => {
                open.push('`');
                prev = Some('`');
            }
            '(' | '[' | '{' => {
                open.push(c);
                prev = Some(c);
                prev_word.clear();
            }
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match open.pop() {
                    Some(o) if o == want => {}
                    // `}` closing a template substitution `${`.
                    Some('$') if c == '}' => {
                        if !skip_template(&chars, &mut i, &mut open) {
                            return false;
                        }
                        continue;
                    }
                    _ => return true,
                }
                prev = Some(c);
                prev_word.clear();
            }
            c if c.is_whitespace() => {}
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                if !prev.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '$') {
                    prev_word.clear();
                }
                prev_word.push(c);
                prev = Some(c);
            }
            c => {
                prev = Some(c);
                prev_word.clear();
            }
        }
        if open.last() == Some(&'`') && c == '`' {
            i += 1;
            if !skip_template(&chars, &mut i, &mut open) {
                return false;
            }
            continue;
        }
        i += 1;
    }
    open.is_empty()
}

/// Inside a template literal at `i` (after its opening backtick or a
/// substitution's closing brace): move past its end, or into a `${`
/// substitution (pushing `$`). False when the text ends inside it.
fn skip_template(chars: &[char], i: &mut usize, open: &mut Vec<char>) -> bool {
    if open.last() == Some(&'$') {
        open.pop();
        *i += 1;
    }
    while *i < chars.len() {
        match chars[*i] {
            '\\' => *i += 2,
            '`' => {
                open.pop();
                *i += 1;
                return true;
            }
            '$' if chars.get(*i + 1) == Some(&'{') => {
                open.push('$');
                *i += 2;
                return true;
            }
            _ => *i += 1,
        }
    }
    false
}

fn find(chars: &[char], from: usize, pat: &str) -> Option<usize> {
    let p: Vec<char> = pat.chars().collect();
    (from..chars.len().saturating_sub(p.len() - 1)).find(|&k| chars[k..k + p.len()] == p[..])
}

fn regex_may_start(prev: Option<char>, prev_word: &str) -> bool {
    match prev {
        None => true,
        Some(c) if c.is_alphanumeric() || c == '_' || c == '$' => matches!(
            prev_word,
            "return"
                | "typeof"
                | "in"
                | "of"
                | "new"
                | "delete"
                | "void"
                | "throw"
                | "case"
                | "do"
                | "else"
        ),
        Some(')' | ']' | '}') => false,
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::is_complete;

    #[test]
    fn brackets_strings_comments_templates() {
        assert!(!is_complete("db.c.find({"));
        assert!(!is_complete("for (const d of x) {\n print(d)"));
        assert!(is_complete("db.c.find({ a: '{' })"));
        assert!(is_complete("x // {"));
        assert!(!is_complete("/* open"));
        assert!(!is_complete("`a ${x"));
        assert!(!is_complete("`line one\n"));
        assert!(is_complete("`a ${ {b: 1}.b } c`"));
        assert!(is_complete("db.c.find({name: /^{/})"));
        assert!(is_complete("a / b / c"));
        assert!(is_complete("if (a && b) { x = [1, 2] }"));
        assert!(!is_complete("if (a && b) {"));
        assert!(is_complete(")"));
    }
}
