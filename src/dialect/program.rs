//! A statement's source, checked and ready to run: [`parse_program`] turns
//! mongosh's shell commands (`use <db>`, `show dbs|collections|profile`,
//! `it`), which are not JavaScript, into calls on the prelude's shell
//! object (one line stays one line, so places in errors do not move), then
//! has the JavaScript engine check the syntax without running anything.

use super::DialectError;

/// A checked statement (or script).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    src: String,
}

impl Program {
    /// The JavaScript that runs (shell commands already turned into calls).
    pub fn source(&self) -> &str {
        &self.src
    }

    /// True when there is nothing but comments and white space.
    pub fn is_empty(&self) -> bool {
        use std::sync::LazyLock;
        static COMMENT: LazyLock<regex::Regex> =
            LazyLock::new(|| regex::Regex::new(r"(?s)/\*.*?\*/|//[^\n]*").expect("valid regex"));
        COMMENT.replace_all(&self.src, "").trim().is_empty()
    }
}

/// Check `src` and make it a [`Program`]: a syntax error comes back as
/// `SyntaxError` with its line and column.
pub fn parse_program(src: &str) -> Result<Program, DialectError> {
    let src = shell_commands(src);
    super::js::check_syntax(&src)?;
    Ok(Program { src })
}

/// Rewrite the lines that are mongosh shell commands.
fn shell_commands(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 16);
    for (i, line) in src.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&shell_command(line).unwrap_or_else(|| line.to_string()));
    }
    out
}

fn shell_command(line: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let t = line.trim_start();
    // `use x; more` runs `more` after the command, as mongosh does.
    let (head, rest) = match t.find(';') {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let head = match head.find("//") {
        Some(i) if rest.is_none() => &head[..i],
        _ => head,
    };
    let mut words = head.split_whitespace();
    let first = words.next()?;
    let arg = words.next();
    if words.next().is_some() {
        return None;
    }
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let call = match (first, arg) {
        ("use", Some(db)) if !db.starts_with(['=', '(', '.', '[']) => {
            format!("__shell.use({})", quoted(db))
        }
        ("show", Some(what)) if what.chars().all(char::is_alphanumeric) => {
            format!("__shell.show({})", quoted(what))
        }
        ("it", None) => "__shell.it()".into(),
        _ => return None,
    };
    Some(match rest {
        Some(rest) => format!("{indent}{call};{rest}"),
        None => format!("{indent}{call}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_become_calls_on_their_own_line() {
        assert_eq!(
            shell_commands("use shop\nshow dbs\nit\nlet it = 1"),
            "__shell.use(\"shop\")\n__shell.show(\"dbs\")\n__shell.it()\nlet it = 1"
        );
        assert_eq!(shell_commands("use = 1"), "use = 1");
    }
}
