//! The command line's own words in the chosen language. `main.rs` decides
//! the language before clap parses ([`lang_from_args`]: `--lang` anywhere on
//! the command line, else the environment, as [`Lang::choose`] does), then
//! [`localize`] rewrites the derived `clap::Command` tree: every about and
//! help text is looked up in the catalogue by its English wording (English
//! stays the source of truth and shows wherever an entry is missing), the
//! headings clap writes ("Usage", "Commands", "Arguments", "Options") and
//! the `[default: …]`/`[env: …]` notes are written in the language, and
//! [`ZhFormatter`] writes clap's parse errors in Chinese, its tips too.
//! [`missing_translations`] lists the help texts without an entry, for the
//! test that keeps the catalogue complete.

use std::ffi::OsString;
use std::fmt::Write as _;

use clap::builder::StyledStr;
use clap::error::{ContextKind, ContextValue, ErrorFormatter, ErrorKind};
use clap::{Arg, Command};

use super::{Lang, Message};

/// The language the command line asks for, read before clap parses it:
/// the value of the last `--lang X` or `--lang=X` before a `--`, else the
/// environment (`LC_ALL`, `LC_MESSAGES`, `LANG`). A value this build has
/// no edition in gives English here; the parsed `--lang` reports it.
pub fn lang_from_args(args: &[OsString], env: impl Fn(&str) -> Option<String>) -> Lang {
    let mut flag: Option<String> = None;
    let mut it = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if a == "--lang" {
            flag = it.next();
        } else if let Some(v) = a.strip_prefix("--lang=") {
            flag = Some(v.to_string());
        }
    }
    match flag {
        Some(tag) => Lang::from_tag(&tag).unwrap_or(Lang::En),
        None => Lang::from_env_with(env),
    }
}

/// `cmd` (built from the derive) with its whole tree's help in `lang`. The
/// tree is built first, so clap's own `--help`, `--version` and `help`
/// subcommand, and the global options copied into every subcommand, are
/// rewritten too. English comes back unchanged.
pub fn localize(mut cmd: Command, lang: Lang) -> Command {
    if lang == Lang::En {
        return cmd;
    }
    cmd.build();
    localize_built(cmd, lang)
}

fn text(lang: Lang, english: &str) -> String {
    lang.lookup(english).unwrap_or(english).to_string()
}

fn localize_built(mut cmd: Command, lang: Lang) -> Command {
    if let Some(a) = cmd.get_about().map(ToString::to_string) {
        cmd = cmd.about(text(lang, &a));
    }
    if let Some(a) = cmd.get_long_about().map(ToString::to_string) {
        cmd = cmd.long_about(text(lang, &a));
    }
    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{}{{usage}}\n\n{{all-args}}{{after-help}}",
        usage_heading(lang)
    );
    cmd = cmd
        .help_template(template)
        .subcommand_help_heading(lang.t("Commands"))
        .mut_args(|a| localize_arg(a, lang));
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for n in names {
        cmd = cmd.mut_subcommand(n, |s| localize_built(s, lang));
    }
    cmd
}

/// "Usage:" in `lang`, with the space that follows it where the heading
/// ends in an ASCII colon (a full-width colon carries its own).
fn usage_heading(lang: Lang) -> String {
    let h = lang.t("Usage:");
    if h.ends_with(':') {
        format!("{h} ")
    } else {
        h.to_string()
    }
}

fn localize_arg(mut a: Arg, lang: Lang) -> Arg {
    let mut notes = String::new();
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && !a.is_hide_default_value_set() && a.get_action().takes_values() {
        let _ = write!(
            notes,
            " {}",
            Message::new("[default: {value}]")
                .arg("value", defaults.join(", "))
                .render_in(lang)
        );
        a = a.hide_default_value(true);
    }
    if let Some(env) = a.get_env().map(|e| e.to_string_lossy().into_owned())
        && !a.is_hide_env_set()
    {
        let _ = write!(
            notes,
            " {}",
            Message::new("[env: {name}]")
                .arg("name", env)
                .render_in(lang)
        );
        a = a.hide_env(true);
    }
    let help = a.get_help().map(ToString::to_string);
    let long = a.get_long_help().map(ToString::to_string);
    if let Some(h) = &help {
        a = a.help(format!("{}{notes}", text(lang, h)));
    }
    if let Some(h) = &long {
        a = a.long_help(format!("{}{notes}", text(lang, h)));
    }
    if a.get_help_heading().is_none() {
        let heading = if a.is_positional() {
            lang.t("Arguments")
        } else {
            lang.t("Options")
        };
        a = a.help_heading(heading);
    }
    a
}

/// Every about and help text of `cmd`'s tree (built first, so clap's own
/// are included) that has no entry in `lang`'s catalogue, each prefixed by
/// the command path it belongs to. Empty for English.
pub fn missing_translations(cmd: &Command, lang: Lang) -> Vec<String> {
    if lang == Lang::En {
        return Vec::new();
    }
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = Vec::new();
    walk_missing(&cmd, lang, cmd.get_name(), &mut out);
    for fixed in [
        "Usage:",
        "Commands",
        "Arguments",
        "Options",
        "[default: {value}]",
        "[env: {name}]",
    ] {
        if lang.lookup(fixed).is_none() {
            out.push(format!("(heading) {fixed}"));
        }
    }
    out
}

fn walk_missing(cmd: &Command, lang: Lang, path: &str, out: &mut Vec<String>) {
    let mut check = |what: String, t: Option<&StyledStr>| {
        if let Some(t) = t.map(ToString::to_string)
            && !t.trim().is_empty()
            && lang.lookup(&t).is_none()
        {
            out.push(format!("{what}: {t:?}"));
        }
    };
    check(format!("{path} about"), cmd.get_about());
    check(format!("{path} long about"), cmd.get_long_about());
    for a in cmd.get_arguments() {
        check(format!("{path} {}", a.get_id()), a.get_help());
        check(format!("{path} {} (long)", a.get_id()), a.get_long_help());
    }
    for s in cmd.get_subcommands() {
        walk_missing(s, lang, &format!("{path} {}", s.get_name()), out);
    }
}

/// clap's parse errors in Simplified Chinese: the same facts clap's own
/// formatter gives (the argument, the value, a similar name, the usage),
/// in our words. Kinds without context fall back to a general sentence.
pub struct ZhFormatter;

fn ctx(e: &clap::error::Error<ZhFormatter>, k: ContextKind) -> Option<String> {
    match e.get(k)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => Some(v.join(", ")),
        ContextValue::StyledStr(s) => Some(s.to_string()),
        ContextValue::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ErrorFormatter for ZhFormatter {
    fn format_error(e: &clap::error::Error<Self>) -> StyledStr {
        let lang = Lang::ZhCn;
        let arg = ctx(e, ContextKind::InvalidArg).unwrap_or_default();
        let value = ctx(e, ContextKind::InvalidValue).unwrap_or_default();
        let sub = ctx(e, ContextKind::InvalidSubcommand).unwrap_or_default();
        let m = |id: &'static str| {
            Message::new(id)
                .arg("arg", &arg)
                .arg("value", &value)
                .arg("sub", &sub)
                .arg("prior", ctx(e, ContextKind::PriorArg).unwrap_or_default())
                .render_in(lang)
        };
        let body = match e.kind() {
            ErrorKind::UnknownArgument => m("unexpected argument '{arg}'"),
            ErrorKind::InvalidSubcommand => m("unrecognized subcommand '{sub}'"),
            ErrorKind::InvalidValue if value.is_empty() => {
                m("a value is required for '{arg}' but none was supplied")
            }
            ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
                m("invalid value '{value}' for '{arg}'")
            }
            ErrorKind::MissingRequiredArgument => {
                m("the following required arguments were not provided: {arg}")
            }
            ErrorKind::MissingSubcommand => m("'{sub}' requires a subcommand but none was given"),
            ErrorKind::ArgumentConflict
                if e.get(ContextKind::InvalidArg).is_some()
                    && e.get(ContextKind::PriorArg) == e.get(ContextKind::InvalidArg) =>
            {
                m("the argument '{arg}' cannot be used more than once")
            }
            ErrorKind::ArgumentConflict if e.get(ContextKind::PriorArg).is_some() => {
                m("the argument '{arg}' cannot be used with '{prior}'")
            }
            ErrorKind::TooManyValues => m("unexpected value '{value}' for '{arg}'"),
            ErrorKind::TooFewValues | ErrorKind::WrongNumberOfValues => {
                Message::new("'{arg}' needs {n} value(s), but {given} were given")
                    .arg("arg", &arg)
                    .arg(
                        "n",
                        ctx(e, ContextKind::MinValues)
                            .or_else(|| ctx(e, ContextKind::ExpectedNumValues))
                            .unwrap_or_default(),
                    )
                    .arg(
                        "given",
                        ctx(e, ContextKind::ActualNumValues).unwrap_or_default(),
                    )
                    .render_in(lang)
            }
            ErrorKind::NoEquals => m("'{arg}' needs its value after an equals sign"),
            _ => m("the command line could not be read"),
        };
        let mut out = String::new();
        let _ = write!(out, "{}{body}", lang.t("error:"));
        // A value parser's own reason (the standard library's words).
        if e.kind() == ErrorKind::ValueValidation
            && let Some(source) = std::error::Error::source(e)
        {
            let _ = write!(out, "{}{source}", lang.t(": "));
        }
        for (kind, list) in [
            (ContextKind::ValidValue, "[possible values: {list}]"),
            (ContextKind::ValidSubcommand, "[subcommands: {list}]"),
        ] {
            if let Some(l) = ctx(e, kind).filter(|l| !l.is_empty()) {
                let _ = write!(
                    out,
                    "\n  {}",
                    Message::new(list).arg("list", l).render_in(lang)
                );
            }
        }
        let mut suggested = false;
        for k in [
            ContextKind::SuggestedSubcommand,
            ContextKind::SuggestedArg,
            ContextKind::SuggestedValue,
        ] {
            if let Some(s) = ctx(e, k) {
                suggested = true;
                let _ = write!(
                    out,
                    "\n\n  {}",
                    Message::new("tip: a similar one exists: '{name}'")
                        .arg("name", s)
                        .render_in(lang)
                );
            }
        }
        if let Some(ContextValue::StyledStrs(tips)) = e.get(ContextKind::Suggested) {
            if !tips.is_empty() && !suggested {
                out.push('\n');
            }
            for t in tips {
                let _ = write!(
                    out,
                    "\n  {}",
                    Message::new("tip: {tip}")
                        .arg_msg("tip", tip(&t.to_string()))
                        .render_in(lang)
                );
            }
        }
        if let Some(u) = ctx(e, ContextKind::Usage) {
            let u = u.strip_prefix("Usage:").map_or(u.clone(), |rest| {
                format!("{}{}", usage_heading(lang), rest.trim_start())
            });
            let _ = write!(out, "\n\n{u}");
        }
        let _ = writeln!(out, "\n\n{}", lang.t("For more information, try '--help'."));
        StyledStr::from(out)
    }
}

/// One of clap's tips (`to pass '--x' as a value, use '-- --x'`, …) as a
/// message; a tip of another shape stays in clap's words.
fn tip(t: &str) -> Message {
    let between = |t: &str, start: &str, mid: &str, end: &str| -> Option<(String, String)> {
        let rest = t.strip_prefix(start)?.strip_suffix(end)?;
        let (a, b) = rest.split_once(mid)?;
        Some((a.to_string(), b.to_string()))
    };
    if let Some((value, usage)) = between(t, "to pass '", "' as a value, use '", "'") {
        return Message::new("to pass '{value}' as a value, write '{usage}'")
            .arg("value", value)
            .arg("usage", usage);
    }
    if let Some(name) = t
        .strip_prefix("subcommand '")
        .and_then(|r| r.strip_suffix("' exists; to use it, remove the '--' before it"))
    {
        return Message::new("the subcommand '{name}' exists: remove the '--' before it to use it")
            .arg("name", name);
    }
    if let Some(name) = t
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix("' exists"))
    {
        return Message::new("'{name}' exists").arg("name", name);
    }
    Message::verbatim(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_flag_anywhere_wins_over_the_environment() {
        let zh_env = |k: &str| (k == "LANG").then(|| "zh_CN.UTF-8".to_string());
        let no_env = |_: &str| None;
        assert_eq!(
            lang_from_args(&argv(&["s", "run", "--lang", "zh-CN", "x"]), no_env),
            Lang::ZhCn
        );
        assert_eq!(
            lang_from_args(&argv(&["s", "--lang=zh", "--help"]), no_env),
            Lang::ZhCn
        );
        assert_eq!(
            lang_from_args(&argv(&["s", "--help", "--lang", "en"]), zh_env),
            Lang::En
        );
        assert_eq!(lang_from_args(&argv(&["s", "--help"]), zh_env), Lang::ZhCn);
        assert_eq!(
            lang_from_args(&argv(&["s", "--", "--lang", "zh"]), no_env),
            Lang::En
        );
        assert_eq!(
            lang_from_args(&argv(&["s", "--lang", "fr"]), zh_env),
            Lang::En
        );
    }

    #[test]
    fn clap_tips_are_rewritten_and_unknown_ones_kept() {
        let zh = |t: &str| tip(t).render_in(Lang::ZhCn);
        let pass = zh("to pass '--foo' as a value, use '-- --foo'");
        assert!(
            pass.contains("'--foo'") && pass.contains("'-- --foo'") && !pass.contains("as a value"),
            "{pass}"
        );
        let sub = zh("subcommand 'run' exists; to use it, remove the '--' before it");
        assert!(sub.contains("'run'") && !sub.contains("exists"), "{sub}");
        let flag = zh("'exercises --dir' exists");
        assert!(
            flag.contains("'exercises --dir'") && !flag.contains("exists"),
            "{flag}"
        );
        assert_eq!(zh("something new"), "something new");
        assert_eq!(
            tip("to pass '--foo' as a value, use '-- --foo'").render_in(Lang::En),
            "to pass '--foo' as a value, write '-- --foo'"
        );
    }

    #[test]
    fn a_command_is_rewritten_and_english_kept_where_missing() {
        let cmd = Command::new("t")
            .about("The course outline")
            .arg(Arg::new("x").long("x").help("no entry for this"));
        let zh = localize(cmd.clone(), Lang::ZhCn);
        assert_ne!(
            zh.get_about().map(ToString::to_string).as_deref(),
            Some("The course outline")
        );
        let x = zh.get_arguments().find(|a| a.get_id() == "x").expect("x");
        assert_eq!(
            x.get_help().map(ToString::to_string).as_deref(),
            Some("no entry for this")
        );
        let missing = missing_translations(&cmd, Lang::ZhCn);
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(missing[0].contains("no entry for this"));
        assert!(missing_translations(&cmd, Lang::En).is_empty());
    }
}
