//! Languages: which edition of the course and of the program's own words a
//! learner sees. English is the base; a translation is a set of files beside
//! the English ones (`lesson.zh-CN.toml`, `lesson.zh-CN.md`, …, format in
//! `docs/CONTENT_FORMAT.md`) and falls back to English for anything it does
//! not provide. This module only names the languages, chooses one from the
//! command line or the environment, and maps an English file to its
//! translation; the course and exercise loaders apply the strings.
//!
//! The program's own words (labels, headings, messages schemalab itself
//! writes) are looked up with [`Lang::t`] by their English text, as gettext
//! does; each translation is one TOML file compiled in (`locale/zh-CN.toml`),
//! and a missing entry shows the English text. Values that carry words are
//! [`Message`]s, rendered when shown; a report that keeps them serialises
//! them in the language [`serialize_in`] chooses.
//!
//! Display width lives here too: CJK characters take two terminal columns,
//! so every padding and wrapping of text that may be translated goes through
//! [`width`] and [`pad`], never `chars().count()`.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use thiserror::Error;
use unicode_width::UnicodeWidthStr;

pub mod cli;

/// A language schemalab has an edition in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Lang {
    /// English: the course as written, and the fallback of every edition.
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
}

/// A `--lang` value this build has no edition in.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown language '{tag}' (this build has: en, zh-CN)")]
pub struct LocaleError {
    pub tag: String,
}

impl Lang {
    /// Every language, English first.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::ZhCn];

    /// Every translation (every language but English).
    pub const TRANSLATIONS: [Lang; 1] = [Lang::ZhCn];

    /// The BCP 47 tag, as used in file names (`lesson.zh-CN.md`).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// Parse a `--lang` value: `en`, `zh-CN`, and the usual spellings of
    /// them (`zh`, `zh_CN`, `zh-Hans`, case-insensitive).
    pub fn from_tag(tag: &str) -> Result<Lang, LocaleError> {
        let t = tag.trim().to_ascii_lowercase().replace('_', "-");
        match t.as_str() {
            "en" | "en-us" | "en-gb" | "english" | "c" | "posix" => Ok(Lang::En),
            "zh" | "zh-cn" | "zh-hans" | "zh-hans-cn" | "zh-sg" | "cn" => Ok(Lang::ZhCn),
            _ => Err(LocaleError {
                tag: tag.to_string(),
            }),
        }
    }

    /// The language the environment asks for: the first of `LC_ALL`,
    /// `LC_MESSAGES` and `LANG` that is set and non-empty decides (POSIX
    /// precedence); a value starting with `zh` chooses Chinese, anything
    /// else English.
    pub fn from_env() -> Lang {
        Self::from_env_with(|k| std::env::var(k).ok())
    }

    /// [`Lang::from_env`] over any variable lookup (for tests).
    pub fn from_env_with(get: impl Fn(&str) -> Option<String>) -> Lang {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let Some(v) = get(key).filter(|v| !v.trim().is_empty()) {
                return if v.trim().to_ascii_lowercase().starts_with("zh") {
                    Lang::ZhCn
                } else {
                    Lang::En
                };
            }
        }
        Lang::En
    }

    /// `--lang` when given, else the environment.
    pub fn choose(flag: Option<&str>) -> Result<Lang, LocaleError> {
        match flag {
            Some(tag) => Lang::from_tag(tag),
            None => Ok(Lang::from_env()),
        }
    }

    /// The translated file beside `english`: `lesson.md` → `lesson.zh-CN.md`;
    /// `None` for English itself.
    pub fn translated_path(self, english: &Path) -> Option<PathBuf> {
        if self == Lang::En {
            return None;
        }
        let stem = english.file_stem()?.to_str()?;
        let name = match english.extension().and_then(|e| e.to_str()) {
            Some(ext) => format!("{stem}.{}.{ext}", self.tag()),
            None => format!("{stem}.{}", self.tag()),
        };
        Some(english.with_file_name(name))
    }

    /// The file to read for `english` in this language: its translation
    /// when that exists, else the English file.
    pub fn pick(self, english: &Path) -> PathBuf {
        match self.translated_path(english) {
            Some(p) if p.is_file() => p,
            _ => english.to_path_buf(),
        }
    }
}

/// The zh-CN message catalogue, parsed once. A catalogue that does not
/// parse is a build defect the unit tests catch; at run time it falls back
/// to English rather than failing.
fn zh_cn() -> &'static HashMap<String, String> {
    static CATALOGUE: OnceLock<HashMap<String, String>> = OnceLock::new();
    CATALOGUE.get_or_init(|| toml::from_str(include_str!("locale/zh-CN.toml")).unwrap_or_default())
}

impl Lang {
    /// The program's text `msgid` (its English wording) in this language;
    /// the English text itself where the catalogue has no entry.
    pub fn t(self, msgid: &'static str) -> &'static str {
        match self {
            Lang::En => msgid,
            Lang::ZhCn => zh_cn().get(msgid).map_or(msgid, String::as_str),
        }
    }

    /// The entry for `msgid` in this language's catalogue, `None` for
    /// English and for a text without an entry (for texts known only at
    /// run time, such as clap's help).
    pub fn lookup(self, msgid: &str) -> Option<&'static str> {
        match self {
            Lang::En => None,
            Lang::ZhCn => zh_cn().get(msgid).map(String::as_str),
        }
    }

    /// [`Lang::t`] with each `{name}` of the text replaced by its value.
    pub fn f(self, msgid: &'static str, args: &[(&str, &dyn fmt::Display)]) -> String {
        fill(self.t(msgid), args)
    }
}

/// One message schemalab writes, kept as its English template (the msgid)
/// and named values, so that English and every translation render from the
/// same model: errors carry a `Message` where their text is composed, and
/// [`Message::render_in`] writes it in the learner's language. A value may
/// itself be a message (a cause inside a frame); values from outside
/// (paths, ids, the server's or a parser's own words) stay as given.
///
/// The default message is empty text. Serialised (a report's JSON) a
/// message is a string: its text in the language [`serialize_in`] chose.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    msgid: &'static str,
    args: Vec<(&'static str, Arg)>,
}

/// A named value of a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Arg {
    Text(String),
    Msg(Message),
    /// A message of which only the first line is shown.
    FirstLine(Message),
}

impl Message {
    /// The message `msgid` (its English text, `{name}` for each value).
    pub fn new(msgid: &'static str) -> Message {
        Message {
            msgid,
            args: Vec::new(),
        }
    }

    /// Give `{name}` a value written the same in every language.
    pub fn arg(mut self, name: &'static str, value: impl fmt::Display) -> Message {
        self.args.push((name, Arg::Text(value.to_string())));
        self
    }

    /// Give `{name}` a value that is itself a message, rendered in the
    /// same language as the whole.
    pub fn arg_msg(mut self, name: &'static str, value: Message) -> Message {
        self.args.push((name, Arg::Msg(value)));
        self
    }

    /// Text that comes from elsewhere (a parser's or the system's own
    /// words), shown as it is in every language.
    pub fn verbatim(text: impl fmt::Display) -> Message {
        Message::new("{text}").arg("text", text)
    }

    /// This message cut to its first line (in whatever language it is
    /// rendered): a one-line summary of a text that may carry a source
    /// excerpt under it.
    pub fn first_line(self) -> Message {
        Message {
            msgid: "{text}",
            args: vec![("text", Arg::FirstLine(self))],
        }
    }

    /// The English template this message renders from.
    pub fn msgid(&self) -> &'static str {
        self.msgid
    }

    /// Every template this message uses (its own and its nested ones'),
    /// for tests that check the catalogue covers them.
    pub fn msgids(&self) -> Vec<&'static str> {
        let mut out = vec![self.msgid];
        for (_, a) in &self.args {
            if let Arg::Msg(m) | Arg::FirstLine(m) = a {
                out.extend(m.msgids());
            }
        }
        out
    }

    /// The message in `lang` (English wherever the catalogue lacks it).
    pub fn render_in(&self, lang: Lang) -> String {
        let values: Vec<(&str, String)> = self
            .args
            .iter()
            .map(|(n, a)| {
                let v = match a {
                    Arg::Text(t) => t.clone(),
                    Arg::Msg(m) => m.render_in(lang),
                    Arg::FirstLine(m) => m
                        .render_in(lang)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                };
                (*n, v)
            })
            .collect();
        let refs: Vec<(&str, &dyn fmt::Display)> = values
            .iter()
            .map(|(n, v)| (*n, v as &dyn fmt::Display))
            .collect();
        fill(lang.t(self.msgid), &refs)
    }
}

impl From<&'static str> for Message {
    fn from(msgid: &'static str) -> Message {
        Message::new(msgid)
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_in(Lang::En))
    }
}

thread_local! {
    /// The language a [`Message`] serialises in on this thread (see
    /// [`serialize_in`]).
    static SERIALIZE_LANG: std::cell::Cell<Lang> = const { std::cell::Cell::new(Lang::En) };
}

/// Run `f` (a serialisation: `serde_json::to_string(&report)`, …) with
/// every [`Message`] it meets written in `lang`; outside it, messages
/// serialise in English. Reports keep their words as messages, so one
/// report renders in any language: its Markdown and table through
/// `render_in`, its JSON through this. The field names and types of the
/// JSON never change (a message is a string).
pub fn serialize_in<T>(lang: Lang, f: impl FnOnce() -> T) -> T {
    struct Restore(Lang);
    impl Drop for Restore {
        fn drop(&mut self) {
            SERIALIZE_LANG.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(SERIALIZE_LANG.with(|l| l.replace(lang)));
    f()
}

/// A message serialises as its text (a JSON string), in the language
/// [`serialize_in`] chose, English otherwise.
impl serde::Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render_in(SERIALIZE_LANG.with(std::cell::Cell::get)))
    }
}

/// A message read back from a serialised report is the text it was
/// written as, shown as it is in every language ([`Message::verbatim`]).
impl<'de> serde::Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Message, D::Error> {
        String::deserialize(d).map(Message::verbatim)
    }
}

/// Something schemalab writes that has a rendering in every language: its
/// `Display` is the English one.
pub trait Localized {
    /// The text in `lang`.
    fn render_in(&self, lang: Lang) -> String;
}

impl Localized for Message {
    fn render_in(&self, lang: Lang) -> String {
        Message::render_in(self, lang)
    }
}

impl Localized for LocaleError {
    fn render_in(&self, lang: Lang) -> String {
        Message::new("unknown language '{tag}' (this build has: en, zh-CN)")
            .arg("tag", &self.tag)
            .render_in(lang)
    }
}

/// `template` with each `{name}` replaced by the value given for `name`;
/// unknown names stay as written.
pub fn fill(template: &str, args: &[(&str, &dyn fmt::Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match args.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => out.push_str(&v.to_string()),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

/// Whether `c` is a CJK ideograph (the unified blocks and their
/// compatibility forms): what a Chinese sentence is made of.
pub fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{20000}'..='\u{2ffff}')
}

/// Columns `s` takes on a terminal (CJK and full-width forms take two).
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` padded with spaces to `cols` columns, on the right (`left`) or the
/// left; never cut.
pub fn pad(s: &str, cols: usize, left: bool) -> String {
    let fill = " ".repeat(cols.saturating_sub(width(s)));
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

/// `s` cut to at most `cols` columns (never inside a double-width
/// character) and padded with spaces to exactly `cols`.
pub fn fit(s: &str, cols: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > cols {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push_str(&" ".repeat(cols - used));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_unknown_is_an_error() {
        for l in Lang::ALL {
            assert_eq!(Lang::from_tag(l.tag()), Ok(l));
        }
        assert_eq!(Lang::from_tag("zh_CN"), Ok(Lang::ZhCn));
        assert_eq!(Lang::from_tag("ZH-hans"), Ok(Lang::ZhCn));
        let e = Lang::from_tag("fr").unwrap_err();
        assert!(e.to_string().contains("'fr'"), "{e}");
    }

    #[test]
    fn environment_follows_posix_precedence() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            Lang::from_env_with(env(&[("LANG", "zh_CN.UTF-8")])),
            Lang::ZhCn
        );
        assert_eq!(
            Lang::from_env_with(env(&[("LANG", "en_US.UTF-8")])),
            Lang::En
        );
        // LC_ALL wins over LANG, LC_MESSAGES over LANG; empty values are unset.
        assert_eq!(
            Lang::from_env_with(env(&[("LC_ALL", "C"), ("LANG", "zh_CN.UTF-8")])),
            Lang::En
        );
        assert_eq!(
            Lang::from_env_with(env(&[
                ("LC_ALL", ""),
                ("LC_MESSAGES", "zh_TW"),
                ("LANG", "en")
            ])),
            Lang::ZhCn
        );
        assert_eq!(Lang::from_env_with(env(&[])), Lang::En);
    }

    #[test]
    fn translated_paths_sit_beside_the_english_file() {
        let p = Path::new("lessons/10-bucket/lesson.md");
        assert_eq!(Lang::En.translated_path(p), None);
        assert_eq!(
            Lang::ZhCn.translated_path(p),
            Some(PathBuf::from("lessons/10-bucket/lesson.zh-CN.md"))
        );
        assert_eq!(
            Lang::ZhCn.translated_path(Path::new("a/exercise.toml")),
            Some(PathBuf::from("a/exercise.zh-CN.toml"))
        );
    }

    #[test]
    fn catalogue_parses_and_keeps_every_placeholder() {
        let cat: HashMap<String, String> =
            toml::from_str(include_str!("locale/zh-CN.toml")).expect("zh-CN.toml parses");
        assert!(cat.len() > 20);
        let names = |s: &str| {
            let mut v: Vec<String> = s
                .split('{')
                .skip(1)
                .filter_map(|p| p.split_once('}').map(|(n, _)| n.to_string()))
                // `{name}` is a value; other braces (`{{ }}`, `{ filter }`)
                // are text.
                .filter(|n| {
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
                .collect();
            v.sort();
            v
        };
        for (en, zh) in &cat {
            assert!(!zh.trim().is_empty(), "empty translation of {en:?}");
            assert_eq!(names(en), names(zh), "placeholders differ in {en:?}");
        }
        assert_eq!(Lang::ZhCn.t("Claims"), "结论");
        assert_eq!(Lang::En.t("Claims"), "Claims");
        assert_eq!(Lang::ZhCn.t("no such text"), "no such text");
    }

    #[test]
    fn fill_replaces_named_values_only() {
        assert_eq!(fill("{a} and {b}", &[("a", &1), ("b", &"x")]), "1 and x");
        assert_eq!(fill("{a} {zz} {", &[("a", &2)]), "2 {zz} {");
        assert_eq!(
            Lang::ZhCn.f(
                "dataset {dataset} (seed {seed})",
                &[("dataset", &"sensors"), ("seed", &42)]
            ),
            "数据集 sensors（种子 42）"
        );
    }

    #[test]
    fn a_message_renders_in_each_language_with_nested_messages() {
        let inner = Message::new("unknown scale '{scale}' (expected tiny, default or large)")
            .arg("scale", "huge");
        let outer = Message::new("{outer}: {cause}")
            .arg("outer", "--scale")
            .arg_msg("cause", inner.clone());
        assert_eq!(
            outer.to_string(),
            "--scale: unknown scale 'huge' (expected tiny, default or large)"
        );
        assert_eq!(
            outer.render_in(Lang::ZhCn),
            "--scale：未知的规模 'huge'（应为 tiny、default 或 large）"
        );
        assert_eq!(outer.msgids(), vec!["{outer}: {cause}", inner.msgid()]);
        // Text from elsewhere stays as written; a missing entry is English.
        assert_eq!(
            Message::verbatim("os error 2").render_in(Lang::ZhCn),
            "os error 2"
        );
        assert_eq!(
            Message::new("no entry {x}")
                .arg("x", 1)
                .render_in(Lang::ZhCn),
            "no entry 1"
        );
        let e = LocaleError { tag: "fr".into() };
        assert_eq!(e.render_in(Lang::En), e.to_string());
        assert!(
            e.render_in(Lang::ZhCn).contains("'fr'") && e.render_in(Lang::ZhCn).contains("未知")
        );
    }

    #[test]
    fn a_message_serialises_as_its_text_in_the_chosen_language() {
        let m = Message::new("{outer}: {cause}")
            .arg("outer", "x")
            .arg_msg("cause", Message::new("cancelled"));
        let en = serde_json::to_string(&m).expect("serialises");
        assert_eq!(en, "\"x: cancelled\"");
        let zh = serialize_in(Lang::ZhCn, || serde_json::to_string(&m)).expect("serialises");
        assert_eq!(zh, "\"x：已取消\"");
        // The language is restored afterwards, and text read back stays.
        assert_eq!(serde_json::to_string(&m).expect("serialises"), en);
        let back: Message = serde_json::from_str(&zh).expect("deserialises");
        assert_eq!(back.render_in(Lang::En), "x：已取消");
    }

    #[test]
    fn first_line_cuts_the_rendering_in_every_language() {
        let m = Message::new("{m}\n{excerpt}")
            .arg_msg("m", Message::new("cancelled"))
            .arg("excerpt", "db.x.find(\n  ^");
        assert_eq!(m.clone().first_line().render_in(Lang::En), "cancelled");
        assert_eq!(m.clone().first_line().render_in(Lang::ZhCn), "已取消");
        assert_eq!(
            m.first_line().msgids(),
            vec!["{text}", "{m}\n{excerpt}", "cancelled"]
        );
    }

    #[test]
    fn width_counts_columns_not_characters() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("桶模式"), 6);
        assert_eq!(pad("桶", 4, true), "桶  ");
        assert_eq!(pad("ab", 4, false), "  ab");
        assert_eq!(pad("超过宽度", 2, true), "超过宽度");
        assert!(is_cjk('桶') && !is_cjk('a') && !is_cjk('，'));
        assert_eq!(fit("扫描索引键数", 5), "扫描 ");
        assert_eq!(fit("abc", 5), "abc  ");
        assert_eq!(width(&fit("桶模式桶模式", 7)), 7);
    }
}
