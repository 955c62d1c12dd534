//! An error of any layer as the one line a user reads: anyhow's chain
//! (`Error: outer: cause: …`), each of schemalab's own errors in the
//! chosen language; text from elsewhere (the operating system, the
//! driver, the server) stays as it was written.

use schemalab::locale::{Lang, Localized, Message};

/// An error and its causes on one line, as anyhow's `{:#}` writes them.
pub fn error_line(e: &anyhow::Error, lang: Lang) -> String {
    lang.f("Error: {e}", &[("e", &causes_in(e, lang))])
}

/// An error and its causes joined as anyhow's `{:#}` joins them, each of
/// schemalab's own in `lang`.
pub fn causes_in(e: &anyhow::Error, lang: Lang) -> String {
    let parts: Vec<String> = e.chain().map(|c| cause_in(c, lang)).collect();
    let joined = Message::new("{outer}: {cause}");
    parts
        .into_iter()
        .reduce(|outer, cause| {
            joined
                .clone()
                .arg("outer", outer)
                .arg("cause", cause)
                .render_in(lang)
        })
        .unwrap_or_default()
}

/// One cause in `lang` when it is one of schemalab's own errors.
fn cause_in(c: &(dyn std::error::Error + 'static), lang: Lang) -> String {
    macro_rules! try_as {
        ($($t:ty),*) => {
            $(if let Some(e) = c.downcast_ref::<$t>() {
                return Localized::render_in(e, lang);
            })*
        };
    }
    try_as!(
        schemalab::course::CourseError,
        schemalab::course::NamesError,
        schemalab::exercises::ExerciseError,
        schemalab::connect::ConnectError,
        schemalab::bundle::BundleError,
        schemalab::datasets::DatasetError,
        schemalab::bench::BenchError,
        schemalab::locale::LocaleError,
        schemalab::dialect::DialectError
    );
    c.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_line_is_anyhows_in_english_and_chinese_for_our_own_causes() {
        let e = anyhow::Error::new(schemalab::course::CourseError::UnknownLesson {
            id: "nosuch".into(),
            known: "a, b".into(),
            suggestion: None,
        })
        .context("shell --lesson nosuch");
        assert_eq!(error_line(&e, Lang::En), format!("Error: {e:#}"));
        assert_eq!(
            error_line(&e, Lang::ZhCn),
            "错误：shell --lesson nosuch：课程清单中没有 'nosuch' 这一课（现有的课：a, b）"
        );
        // A cause from elsewhere stays as written.
        let io = anyhow::Error::new(std::io::Error::other("disk on fire")).context("--scale");
        assert_eq!(error_line(&io, Lang::ZhCn), "错误：--scale：disk on fire");
    }
}
