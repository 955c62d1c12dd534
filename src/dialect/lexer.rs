//! Lexing: turns dialect source text into tokens, each carrying the line and
//! column where it starts and whether a newline preceded it (newlines end
//! statements, as JavaScript's automatic semicolon insertion does for the
//! statement shapes the dialect accepts). The argument of a `use` command
//! is read as one raw word, as mongosh reads it (so `use one-to-few_x`
//! names a database rather than a subtraction). [`is_complete`] is the
//! interactive shell's test for "run this, or read another line": it
//! counts brackets over the tokens, so brackets inside strings, regular
//! expressions and comments never count.

use super::{DialectError, Pos};
use crate::locale::Message;

/// One lexical token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword (`db`, `const`, `$set` …).
    Ident(String),
    /// A numeric literal; JavaScript numbers are all doubles.
    Num(f64),
    /// A string literal with escapes resolved.
    Str(String),
    /// A regular-expression literal `/pattern/flags`.
    Regex { pattern: String, flags: String },
    /// Punctuation or an operator.
    Punct(&'static str),
    /// The raw argument of a `use` command: everything after `use` up to
    /// white space, `;` or the end of the line, as mongosh splits it.
    Word(String),
    /// End of input.
    Eof,
}

/// A token plus where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
    /// True when at least one line break separates this token from the previous one.
    pub newline_before: bool,
}

/// Longest first, so `===` wins over `==` and `=`.
const PUNCTS: &[&str] = &[
    "...", "===", "!==", "**=", "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--",
    "+=", "-=", "*=", "/=", "%=", "**", "{", "}", "(", ")", "[", "]", ";", ",", ":", ".", "+", "-",
    "*", "/", "%", "=", "<", ">", "!", "?", "&", "|", "^", "~",
];

struct Lexer<'a> {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    _src: &'a str,
}

/// Split `src` into tokens; the last token is always [`Tok::Eof`].
pub fn tokenize(src: &str) -> Result<Vec<Token>, DialectError> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
        _src: src,
    };
    let mut out: Vec<Token> = Vec::new();
    let mut newline_before = false;
    loop {
        // Whitespace and comments.
        loop {
            match lx.peek(0) {
                Some('\n') => {
                    newline_before = true;
                    lx.bump();
                }
                // U+FEFF (a byte-order mark) is whitespace in JavaScript.
                Some(c) if c.is_whitespace() || c == '\u{feff}' => {
                    lx.bump();
                }
                Some('/') if lx.peek(1) == Some('/') => {
                    while let Some(c) = lx.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        lx.bump();
                    }
                }
                Some('/') if lx.peek(1) == Some('*') => {
                    let start = lx.pos();
                    lx.bump();
                    lx.bump();
                    loop {
                        match lx.peek(0) {
                            None => {
                                return Err(DialectError::syntax(UNTERMINATED_COMMENT, start));
                            }
                            Some('*') if lx.peek(1) == Some('/') => {
                                lx.bump();
                                lx.bump();
                                break;
                            }
                            Some('\n') => {
                                newline_before = true;
                                lx.bump();
                            }
                            Some(_) => {
                                lx.bump();
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        let pos = lx.pos();
        let Some(c) = lx.peek(0) else {
            out.push(Token {
                tok: Tok::Eof,
                pos,
                newline_before: true,
            });
            return Ok(out);
        };
        let tok =
            if c.is_ascii_digit() || (c == '.' && lx.peek(1).is_some_and(|d| d.is_ascii_digit())) {
                lx.number(pos)?
            } else if is_ident_start(c) {
                let mut s = String::new();
                while let Some(c) = lx.peek(0) {
                    if is_ident_part(c) {
                        s.push(c);
                        lx.bump();
                    } else {
                        break;
                    }
                }
                let command = s == "use" && starts_statement(out.last(), newline_before);
                let tok = Tok::Ident(s);
                if command && let Some(word) = lx.command_word() {
                    out.push(Token {
                        tok,
                        pos,
                        newline_before,
                    });
                    newline_before = false;
                    let (wpos, word) = word;
                    out.push(Token {
                        tok: Tok::Word(word),
                        pos: wpos,
                        newline_before: false,
                    });
                    continue;
                }
                tok
            } else if c == '\'' || c == '"' {
                lx.string(c, pos)?
            } else if c == '`' {
                lx.template(pos)?
            } else if c == '/' && regex_allowed(out.last()) {
                lx.regex(pos)?
            } else {
                let mut found = None;
                for p in PUNCTS {
                    if p.chars().enumerate().all(|(k, pc)| lx.peek(k) == Some(pc)) {
                        found = Some(*p);
                        break;
                    }
                }
                match found {
                    Some(p) => {
                        for _ in 0..p.chars().count() {
                            lx.bump();
                        }
                        Tok::Punct(p)
                    }
                    None => {
                        return Err(DialectError::syntax(
                            Message::new("unexpected character '{c}'").arg("c", c),
                            pos,
                        ));
                    }
                }
            };
        out.push(Token {
            tok,
            pos,
            newline_before,
        });
        newline_before = false;
    }
}

const UNTERMINATED_COMMENT: &str = "unterminated comment";
const UNTERMINATED_STRING: &str = "unterminated string literal";
const UNTERMINATED_TEMPLATE: &str = "unterminated template literal";

/// Whether `src` is a whole input the shell should run now, rather than
/// the start of a statement that goes on in the next line (as mongosh,
/// through Node's REPL, decides): a `(`, `[` or `{` still open, a block
/// comment or template literal not yet closed, or a string whose last
/// line ends in a line-continuation backslash make it incomplete.
/// Brackets inside strings, regular expressions and comments do not
/// count. Anything else, errors included, is complete: running it
/// reports the error with its place instead of waiting for more lines
/// that cannot help (a stray `)`, an unterminated `'…` string).
pub fn is_complete(src: &str) -> bool {
    match tokenize(src) {
        Ok(tokens) => {
            let mut open: Vec<&str> = Vec::new();
            for t in &tokens {
                match t.tok {
                    Tok::Punct(p @ ("(" | "[" | "{")) => open.push(p),
                    Tok::Punct(p @ (")" | "]" | "}")) => {
                        let opener = match p {
                            ")" => "(",
                            "]" => "[",
                            _ => "{",
                        };
                        if open.pop() != Some(opener) {
                            return true;
                        }
                    }
                    _ => {}
                }
            }
            open.is_empty()
        }
        Err(DialectError::Syntax { message, .. }) => match message.msgid() {
            UNTERMINATED_COMMENT | UNTERMINATED_TEMPLATE => false,
            UNTERMINATED_STRING => {
                let trailing = src.chars().rev().take_while(|&c| c == '\\').count();
                trailing % 2 == 0
            }
            _ => true,
        },
        Err(_) => true,
    }
}

/// Whether a token after `prev` (and after a line break when
/// `newline_before`) begins a statement.
fn starts_statement(prev: Option<&Token>, newline_before: bool) -> bool {
    newline_before
        || matches!(
            prev.map(|t| &t.tok),
            None | Some(Tok::Punct(";" | "{" | "}"))
        )
}

/// A `/` starts a regex unless the previous token ends a value (then it divides).
fn regex_allowed(prev: Option<&Token>) -> bool {
    match prev.map(|t| &t.tok) {
        None => true,
        Some(Tok::Num(_) | Tok::Str(_) | Tok::Regex { .. } | Tok::Word(_)) => false,
        Some(Tok::Ident(s)) => matches!(s.as_str(), "return" | "typeof" | "of" | "in"),
        Some(Tok::Punct(p)) => !matches!(*p, ")" | "]" | "}"),
        Some(Tok::Eof) => true,
    }
}

fn is_ident_start(c: char) -> bool {
    c == '$' || c == '_' || c.is_alphabetic()
}

fn is_ident_part(c: char) -> bool {
    is_ident_start(c) || c.is_alphanumeric()
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    /// After `use` at the start of a statement: the raw word that follows
    /// on the same line (up to white space or `;`), unless what follows
    /// makes `use` an ordinary name (`use = 1`, `use(…)`, `use.x`, a line
    /// break …).
    fn command_word(&mut self) -> Option<(Pos, String)> {
        let mut k = 0;
        while self
            .peek(k)
            .is_some_and(|c| c != '\n' && (c.is_whitespace() || c == '\u{feff}'))
        {
            k += 1;
        }
        if k == 0 {
            return None;
        }
        match self.peek(k) {
            None | Some('\n' | '=' | '(' | '.' | '[' | ';' | ',' | ')' | ']' | '}' | ':') => {
                return None;
            }
            // `use // note` or `use /* … */`: a comment, not a name.
            Some('/') if matches!(self.peek(k + 1), Some('/' | '*')) => return None,
            Some(_) => {}
        }
        for _ in 0..k {
            self.bump();
        }
        let pos = self.pos();
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || c == ';' {
                break;
            }
            word.push(c);
            self.bump();
        }
        Some((pos, word))
    }

    fn number(&mut self, pos: Pos) -> Result<Tok, DialectError> {
        if self.peek(0) == Some('0') && matches!(self.peek(1), Some('x' | 'X')) {
            self.bump();
            self.bump();
            let mut v: f64 = 0.0;
            let mut any = false;
            while let Some(d) = self.peek(0).and_then(|c| c.to_digit(16)) {
                v = v * 16.0 + f64::from(d);
                any = true;
                self.bump();
            }
            if !any {
                return Err(DialectError::syntax("invalid hexadecimal number", pos));
            }
            return self.finish_number(v, pos);
        }
        let mut s = String::new();
        while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
            s.push(c);
            self.bump();
        }
        if self.peek(0) == Some('.') {
            s.push('.');
            self.bump();
            while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
                s.push(c);
                self.bump();
            }
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            let sign = self.peek(1);
            let digit_at = if matches!(sign, Some('+' | '-')) {
                2
            } else {
                1
            };
            if self.peek(digit_at).is_some_and(|c| c.is_ascii_digit()) {
                s.push('e');
                self.bump();
                if digit_at == 2
                    && let Some(sc) = self.bump()
                {
                    s.push(sc);
                }
                while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
                    s.push(c);
                    self.bump();
                }
            } else {
                return Err(DialectError::syntax("invalid number exponent", pos));
            }
        }
        let v: f64 = s.parse().map_err(|_| {
            DialectError::syntax(Message::new("invalid number '{s}'").arg("s", &s), pos)
        })?;
        self.finish_number(v, pos)
    }

    fn finish_number(&mut self, v: f64, pos: Pos) -> Result<Tok, DialectError> {
        match self.peek(0) {
            Some('n') => Err(DialectError::unsupported("BigInt literals", pos)),
            Some(c) if is_ident_start(c) || c.is_ascii_digit() => Err(DialectError::syntax(
                "identifier directly after number",
                pos,
            )),
            _ => Ok(Tok::Num(v)),
        }
    }

    fn escape(&mut self, out: &mut String, start: Pos) -> Result<(), DialectError> {
        let Some(e) = self.bump() else {
            return Err(DialectError::syntax(UNTERMINATED_STRING, start));
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0' => out.push('\0'),
            '\n' => {}
            'x' => {
                let h = self.hex_digits(2, start)?;
                out.push(char::from_u32(h).unwrap_or('\u{fffd}'));
            }
            'u' => {
                let code = if self.peek(0) == Some('{') {
                    self.bump();
                    let mut v: u32 = 0;
                    loop {
                        match self.bump() {
                            Some('}') => break,
                            Some(c) => match c.to_digit(16) {
                                Some(d) if v < 0x11_0000 => v = v * 16 + d,
                                _ => {
                                    return Err(DialectError::syntax(
                                        "invalid unicode escape",
                                        start,
                                    ));
                                }
                            },
                            None => {
                                return Err(DialectError::syntax("invalid unicode escape", start));
                            }
                        }
                    }
                    v
                } else {
                    let hi = self.hex_digits(4, start)?;
                    // A surrogate pair written as two \u escapes.
                    if (0xD800..0xDC00).contains(&hi)
                        && self.peek(0) == Some('\\')
                        && self.peek(1) == Some('u')
                    {
                        self.bump();
                        self.bump();
                        let lo = self.hex_digits(4, start)?;
                        0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3ff)
                    } else {
                        hi
                    }
                };
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            other => out.push(other),
        }
        Ok(())
    }

    fn hex_digits(&mut self, n: usize, start: Pos) -> Result<u32, DialectError> {
        let mut v = 0;
        for _ in 0..n {
            match self.bump().and_then(|c| c.to_digit(16)) {
                Some(d) => v = v * 16 + d,
                None => return Err(DialectError::syntax("invalid escape sequence", start)),
            }
        }
        Ok(v)
    }

    fn string(&mut self, quote: char, start: Pos) -> Result<Tok, DialectError> {
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => {
                    return Err(DialectError::syntax(UNTERMINATED_STRING, start));
                }
                Some(c) if c == quote => return Ok(Tok::Str(out)),
                Some('\\') => self.escape(&mut out, start)?,
                Some(c) => out.push(c),
            }
        }
    }

    /// Template literals without substitutions are plain strings.
    fn template(&mut self, start: Pos) -> Result<Tok, DialectError> {
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(DialectError::syntax(UNTERMINATED_TEMPLATE, start)),
                Some('`') => return Ok(Tok::Str(out)),
                Some('$') if self.peek(0) == Some('{') => {
                    return Err(DialectError::unsupported(
                        "template literal substitutions `${…}`",
                        start,
                    ));
                }
                Some('\\') => self.escape(&mut out, start)?,
                Some(c) => out.push(c),
            }
        }
    }

    fn regex(&mut self, start: Pos) -> Result<Tok, DialectError> {
        self.bump();
        let mut pattern = String::new();
        let mut in_class = false;
        loop {
            match self.bump() {
                None | Some('\n') => {
                    return Err(DialectError::syntax(
                        "unterminated regular expression",
                        start,
                    ));
                }
                Some('\\') => {
                    pattern.push('\\');
                    match self.bump() {
                        None | Some('\n') => {
                            return Err(DialectError::syntax(
                                "unterminated regular expression",
                                start,
                            ));
                        }
                        Some(c) => pattern.push(c),
                    }
                }
                Some('[') => {
                    in_class = true;
                    pattern.push('[');
                }
                Some(']') => {
                    in_class = false;
                    pattern.push(']');
                }
                Some('/') if !in_class => break,
                Some(c) => pattern.push(c),
            }
        }
        let mut flags = String::new();
        while let Some(c) = self.peek(0).filter(|c| c.is_ascii_alphabetic()) {
            if !"gimsuyx".contains(c) || flags.contains(c) {
                return Err(DialectError::syntax(
                    Message::new("invalid regular expression flag '{c}'").arg("c", c),
                    self.pos(),
                ));
            }
            flags.push(c);
            self.bump();
        }
        Ok(Tok::Regex { pattern, flags })
    }
}

#[cfg(test)]
mod tests {
    use super::{Tok, is_complete, tokenize};

    #[test]
    fn open_brackets_wait_for_more_lines() {
        for open in [
            "db.c.find({",
            "db.c.find({ a: 1 }",
            "db.c.aggregate([",
            "db.c.aggregate([{ $match: { a: 1 } },",
            "for (const d of db.c.find()) {\n  print(d)",
            "printjson([1, [2, [3",
            "const x = {\n  a: [1,\n",
            "/* a comment\n  that goes on",
            "print(`a template\nover lines",
            // A backslash at the end of a string's line continues it.
            "print('one \\",
        ] {
            assert!(!is_complete(open), "{open:?} should continue");
        }
    }

    #[test]
    fn brackets_in_strings_regexes_and_comments_do_not_count() {
        for done in [
            "db.c.find({ a: '{' })",
            "db.c.find({ a: \"[(\" })",
            "db.c.find({ a: `{` })",
            "db.c.find({ a: /[{(]/ })",
            "db.c.find() // {",
            "db.c.find() /* ( */",
            "print('\\'(')",
            "use schemalab_one-to-few_embedded",
            "",
            "   ",
        ] {
            assert!(is_complete(done), "{done:?} should run");
        }
    }

    #[test]
    fn errors_run_at_once_to_be_reported() {
        for bad in [
            "db.c.find({ a: 1 ))",
            "db.c.find(]",
            "print('unterminated",
            "print('two \\\\",
            "db.c.find({ # })",
            "db.c.find(/unterminated",
        ] {
            assert!(is_complete(bad), "{bad:?} should run (and fail)");
        }
    }

    #[test]
    fn use_reads_one_raw_word() {
        let words = |src: &str| -> Vec<Tok> {
            tokenize(src)
                .unwrap()
                .into_iter()
                .map(|t| t.tok)
                .filter(|t| !matches!(t, Tok::Eof))
                .collect()
        };
        assert_eq!(
            words("use schemalab_one-to-few_embedded"),
            vec![
                Tok::Ident("use".into()),
                Tok::Word("schemalab_one-to-few_embedded".into())
            ]
        );
        assert_eq!(
            words("use a-b; use c\nuse\td-e // note"),
            vec![
                Tok::Ident("use".into()),
                Tok::Word("a-b".into()),
                Tok::Punct(";"),
                Tok::Ident("use".into()),
                Tok::Word("c".into()),
                Tok::Ident("use".into()),
                Tok::Word("d-e".into()),
            ]
        );
        // Not a command: `use` as an ordinary name, or not at a statement start.
        assert!(!words("use = 1").iter().any(|t| matches!(t, Tok::Word(_))));
        assert!(!words("use(1)").iter().any(|t| matches!(t, Tok::Word(_))));
        assert!(!words("x.use y").iter().any(|t| matches!(t, Tok::Word(_))));
        assert!(!words("use\nfoo").iter().any(|t| matches!(t, Tok::Word(_))));
        assert!(!words("use // x").iter().any(|t| matches!(t, Tok::Word(_))));
    }
}
