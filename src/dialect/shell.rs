//! The `schemalab shell` front end: run a script file (showing only what
//! it prints, as `mongosh file.js` does), or an interactive line editor
//! with history, a prompt naming the current database, multi-line input
//! while a bracket, block comment or template literal is open (the
//! lexer's [`super::is_complete`]), and `Type "it" for more` cursor paging.

use std::path::Path;

use mongodb::Client;

use super::{DialectError, Output, Session, WritePolicy};
use crate::locale::{Lang, Message};

/// Read a script: UTF-8 (a leading byte-order mark is skipped, as Node
/// does); anything else is an error naming the file and, for bytes that
/// are not UTF-8, the line and column where they start.
pub fn read_script(path: &Path) -> Result<String, DialectError> {
    let shown = path.display();
    if path.is_dir() {
        return Err(DialectError::Io(
            Message::new("{path}: is a directory, not a script file").arg("path", &shown),
        ));
    }
    let bytes = crate::files::read_bytes(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => Message::new("no such file"),
            std::io::ErrorKind::PermissionDenied => Message::new("permission denied"),
            _ => Message::verbatim(e),
        };
        DialectError::Io(
            Message::new("{path}: cannot read the script: {why}")
                .arg("path", &shown)
                .arg_msg("why", why),
        )
    })?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            // `good` is valid UTF-8 by construction.
            let before = std::str::from_utf8(good).unwrap_or_default();
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Err(DialectError::Io(
                Message::new("{path}:{line}:{col}: the script is not valid UTF-8 (byte {byte})")
                    .arg("path", &shown)
                    .arg("line", line)
                    .arg("col", col)
                    .arg("byte", format!("0x{:02X}", bytes[e.valid_up_to()])),
            ))
        }
    }
}

/// Run every statement of `path` through `client` in `db` (every command
/// through `policy`'s write gate), printing outputs to stdout. Every
/// failure is printed to stderr as one line naming the place (`file:
/// message (line:col)`, then the source line and a caret, schemalab's own
/// words in `lang`) and returned.
pub async fn run_file(
    client: &Client,
    db: &str,
    path: &Path,
    policy: WritePolicy,
    lang: Lang,
) -> Result<(), DialectError> {
    run_file_with(client, db, path, policy, lang, &[]).await
}

/// [`run_file`] with names bound as constants first (an exercise's drawn
/// parameters, for `schemalab shell --exercise`).
pub async fn run_file_with(
    client: &Client,
    db: &str,
    path: &Path,
    policy: WritePolicy,
    lang: Lang,
    bindings: &[(String, bson::Bson)],
) -> Result<(), DialectError> {
    let src = match read_script(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{}", e.line(lang));
            return Err(e);
        }
    };
    let mut session = match Session::connect(client, db) {
        Ok(s) => s.with_policy(policy),
        Err(e) => {
            eprintln!("{}", e.line(lang));
            return Err(e);
        }
    };
    for (name, value) in bindings {
        session.bind(name, value.clone());
    }
    // What the script prints goes out as it is printed, as mongosh's does.
    session.stream_output(Box::new(|outputs| {
        let printed: Vec<Output> = outputs
            .into_iter()
            .filter(|o| matches!(o, Output::Print(_)))
            .collect();
        print_outputs(&printed)
    }));
    let (outputs, result) = session.eval_script(&src).await;
    // A reader that closed stdout (`| head -1`) had all it wanted.
    if let Err(DialectError::OutputClosed { .. }) = result {
        return Ok(());
    }
    // Like `mongosh file.js`, a script shows only what it prints: the
    // values of its expression statements are not echoed, and neither
    // are the replies of `use`, `show` and `it` (which mongosh does not
    // even accept in a file: they are not JavaScript).
    let printed: Vec<Output> = outputs
        .into_iter()
        .filter(|o| matches!(o, Output::Print(_)))
        .collect();
    print_outputs(&printed);
    if let Err(e) = &result {
        eprintln!("{}: {}", path.display(), e.render_src_in(&src, lang));
    }
    result
}

/// Evaluate `src`; Ctrl-C while it runs stops the statement (its
/// JavaScript at once, a command in flight when it returns), not the shell.
async fn interruptible(
    session: &mut Session,
    src: &str,
) -> (Vec<Output>, Result<(), DialectError>) {
    let interrupter = match session.interrupter() {
        Ok(i) => i,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let eval = session.eval_partial(src);
    tokio::pin!(eval);
    loop {
        tokio::select! {
            done = &mut eval => return done,
            signal = tokio::signal::ctrl_c() => {
                if signal.is_err() {
                    return eval.await;
                }
                interrupter.interrupt();
            }
        }
    }
}

/// Print what statements printed, one per line; `false` once stdout is
/// closed. A reader that closed stdout (`shell --file x.js | head -1`) has
/// all it wanted: the rest is dropped, not a panic.
fn print_outputs(outputs: &[Output]) -> bool {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    for o in outputs {
        let s = o.render();
        // `print()` prints an empty line; an empty batch prints nothing.
        let shown = !s.is_empty() || matches!(o, Output::Print(_));
        if shown && writeln!(stdout, "{s}").is_err() {
            return false;
        }
    }
    stdout.flush().is_ok()
}

/// True while `src` is the start of a statement that goes on in the next
/// line (an open bracket, block comment or template literal), so the
/// editor should keep reading lines: `!`[`super::is_complete`].
pub fn needs_more_input(src: &str) -> bool {
    !super::is_complete(src)
}

/// The prompt before a new statement: the current database, as mongosh
/// shows it (`schemalab_bucket_naive> `).
pub fn prompt(db: &str) -> String {
    format!("{db}> ")
}

/// The prompt before each further line of an unfinished statement.
pub const CONTINUATION_PROMPT: &str = "... ";

/// The interactive shell through `client`, on the runtime `rt` that drives
/// it, its banner and schemalab's own words of errors in `lang`. Blocks
/// the calling thread, which must not be one of the runtime's async tasks.
pub fn run_interactive(
    rt: &tokio::runtime::Handle,
    client: &Client,
    db: &str,
    policy: WritePolicy,
    lang: Lang,
) -> Result<(), DialectError> {
    run_interactive_with(rt, client, db, policy, lang, &[])
}

/// [`run_interactive`] with names bound as constants first (an
/// exercise's drawn parameters, for `schemalab shell --exercise`).
pub fn run_interactive_with(
    rt: &tokio::runtime::Handle,
    client: &Client,
    db: &str,
    policy: WritePolicy,
    lang: Lang,
    bindings: &[(String, bson::Bson)],
) -> Result<(), DialectError> {
    let mut session = Session::connect(client, db)?.with_policy(policy);
    for (name, value) in bindings {
        session.bind(name, value.clone());
    }
    // What a statement prints shows as it is printed, as at mongosh's
    // prompt (and is not kept: no limit on a long loop's output).
    session.stream_output(Box::new(|outputs| print_outputs(&outputs)));
    let mut editor =
        rustyline::DefaultEditor::new().map_err(|e| DialectError::Io(Message::verbatim(e)))?;
    let history = directories::ProjectDirs::from("", "", "schemalab")
        .map(|d| d.data_dir().join("shell_history"));
    if let Some(h) = &history {
        // A missing history file on first run is normal.
        let _ = editor.load_history(h);
    }
    println!(
        "{}",
        lang.t("schemalab shell (mongosh JavaScript). Type .exit or press Ctrl-D to leave.")
    );
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            prompt(session.db_name())
        } else {
            CONTINUATION_PROMPT.to_string()
        };
        match editor.readline(&prompt) {
            Ok(line) => {
                if buffer.is_empty()
                    && matches!(line.trim(), ".exit" | "exit" | "quit" | "exit()" | "quit()")
                {
                    break;
                }
                if !buffer.is_empty() {
                    buffer.push('\n');
                }
                buffer.push_str(&line);
                if needs_more_input(&buffer) {
                    continue;
                }
                let src = std::mem::take(&mut buffer);
                let src = src.strip_prefix('\u{feff}').unwrap_or(&src).to_string();
                if src.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(src.as_str());
                let (outputs, result) = rt.block_on(interruptible(&mut session, &src));
                print_outputs(&outputs);
                if let Err(e) = result {
                    eprintln!("{}", e.render_src_in(&src, lang));
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => {
                // Ctrl-C abandons the current (multi-line) input, like mongosh.
                buffer.clear();
            }
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(DialectError::Io(Message::verbatim(e))),
        }
    }
    if let Some(h) = &history {
        if let Some(dir) = h.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(h);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{needs_more_input, prompt};

    #[test]
    fn open_brackets_continue() {
        assert!(needs_more_input("db.c.find({"));
        assert!(needs_more_input("for (const d of x) {\n print(d)"));
        assert!(!needs_more_input("db.c.find({ a: '{' })"));
        assert!(!needs_more_input("x // {"));
        assert!(needs_more_input("/* open"));
    }

    #[test]
    fn prompt_names_the_database() {
        assert_eq!(prompt("schemalab_bucket_naive"), "schemalab_bucket_naive> ");
    }
}
