//! Syntax highlighting of mongosh statements, JSON documents and lesson code
//! blocks. syntect only parses (scopes); colours come from our own
//! [`Theme`], so highlighted code matches the rest of the app, the
//! presenter theme and `NO_COLOR`.

use std::sync::OnceLock;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use syntect::easy::ScopeRangeIterator;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

use super::theme::Theme;

#[derive(Clone, Copy)]
enum Class {
    Comment,
    Str,
    Number,
    Keyword,
    Function,
    Punct,
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Scope prefixes in priority order (the first match on the innermost scope
/// wins).
fn classes() -> &'static [(Scope, Class)] {
    static CLASSES: OnceLock<Vec<(Scope, Class)>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        [
            ("comment", Class::Comment),
            ("string", Class::Str),
            ("constant.numeric", Class::Number),
            ("constant.language", Class::Number),
            ("keyword", Class::Keyword),
            ("storage", Class::Keyword),
            ("entity.name.function", Class::Function),
            ("support.function", Class::Function),
            ("variable.function", Class::Function),
            ("meta.function-call", Class::Function),
            ("support.type.property-name", Class::Function),
            ("punctuation", Class::Punct),
        ]
        .into_iter()
        .filter_map(|(name, class)| Scope::new(name).ok().map(|s| (s, class)))
        .collect()
    })
}

fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let token = match lang {
        "js" | "javascript" | "mongosh" | "mongo" => "js",
        "json" | "jsonc" => "json",
        other => other,
    };
    syntaxes().find_syntax_by_token(token)
}

fn style_of(stack: &ScopeStack, theme: &Theme) -> Style {
    for scope in stack.as_slice().iter().rev() {
        for (prefix, class) in classes() {
            if prefix.is_prefix_of(*scope) {
                return match class {
                    Class::Comment => theme.comment,
                    Class::Str => theme.string,
                    Class::Number => theme.number,
                    Class::Keyword => theme.keyword,
                    Class::Function => theme.function,
                    Class::Punct => theme.punct,
                };
            }
        }
    }
    theme.code
}

/// Highlights `code` as `lang` (`js`, `json`, …); unknown languages come
/// back plain in the code style.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
    let Some(syntax) = syntax_for(lang) else {
        return code
            .lines()
            .map(|l| Line::from(Span::styled(l.to_string(), theme.code)))
            .collect();
    };
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for raw in code.split_inclusive('\n') {
        let mut spans = Vec::new();
        let line = if raw.ends_with('\n') {
            raw.to_string()
        } else {
            format!("{raw}\n")
        };
        match state.parse_line(&line, syntaxes()) {
            Ok(ops) => {
                for (range, op) in ScopeRangeIterator::new(&ops, &line) {
                    // A malformed op only loses colour, never text.
                    let _ = stack.apply(op);
                    let text = line[range].trim_end_matches('\n');
                    if !text.is_empty() {
                        spans.push(Span::styled(text.to_string(), style_of(&stack, theme)));
                    }
                }
            }
            Err(_) => spans.push(Span::styled(
                line.trim_end_matches('\n').to_string(),
                theme.code,
            )),
        }
        out.push(Line::from(spans));
    }
    out
}

/// One-line highlight (statements in the experiment view).
pub fn highlight_line(code: &str, lang: &str, theme: &Theme) -> Line<'static> {
    let mut lines = highlight(code, lang, theme);
    if lines.len() == 1 {
        lines.pop().unwrap_or_default()
    } else {
        Line::from(lines.into_iter().flat_map(|l| l.spans).collect::<Vec<_>>())
    }
}
