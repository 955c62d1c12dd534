//! Lesson prose: Markdown → wrapped ratatui lines, laid out for a given
//! width once (when the lesson, the width or the report changes), so that
//! rendering a frame only slices the result. Records where each `##`
//! section starts for section jumps and presenter reveal. Placeholders are
//! filled before layout by the course's own prose renderer
//! (`course::claims::render_prose`), never here.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::highlight;
use super::theme::Theme;

/// A laid-out document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    pub lines: Vec<Line<'static>>,
    /// Line index of each `##` heading.
    pub sections: Vec<usize>,
    pub width: u16,
}

struct ListLevel {
    next: Option<u64>,
}

struct Builder<'t> {
    theme: &'t Theme,
    width: usize,
    lines: Vec<Line<'static>>,
    sections: Vec<usize>,
    inline: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<ListLevel>,
    /// Prefix for the first line of the pending item.
    item_prefix: Option<String>,
    quote: usize,
    code: Option<(String, String)>,
    table: Option<Vec<Vec<String>>>,
    cell: String,
    link: Option<String>,
    heading: Option<HeadingLevel>,
}

impl Builder<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.base)
    }

    fn margin(&self) -> String {
        " ".repeat(usize::from(self.theme.spacing) * 2)
    }

    fn indent(&self) -> String {
        let mut s = self.margin();
        s.push_str(&"  ".repeat(self.lists.len().saturating_sub(1)));
        if !self.lists.is_empty() {
            s.push_str("  ");
        }
        for _ in 0..self.quote {
            s.push_str("▌ ");
        }
        s
    }

    fn blank(&mut self) {
        if self.lines.last().is_some_and(|l| l.width() > 0) {
            self.lines.push(Line::default());
            for _ in 0..self.theme.spacing {
                self.lines.push(Line::default());
            }
        }
    }

    fn text(&mut self, t: &str) {
        if self.table.is_some() {
            self.cell.push_str(t);
            return;
        }
        if let Some((_, code)) = self.code.as_mut() {
            code.push_str(t);
            return;
        }
        let style = self.style();
        self.inline.push(Span::styled(t.to_string(), style));
    }

    /// Wraps the pending inline spans into lines.
    fn flush(&mut self) {
        if self.inline.is_empty() && self.item_prefix.is_none() {
            return;
        }
        let indent = self.indent();
        let first = match self.item_prefix.take() {
            Some(p) => {
                let base = indent.chars().count().saturating_sub(2);
                format!("{}{p}", indent.chars().take(base).collect::<String>())
            }
            None => indent.clone(),
        };
        let spans = std::mem::take(&mut self.inline);
        let prefix_style = if self.quote > 0 {
            self.theme.quote
        } else {
            self.theme.dim
        };
        let mut line: Vec<Span<'static>> = vec![Span::styled(first.clone(), prefix_style)];
        let mut used = first.chars().count();
        let avail = self.width.max(20);
        for span in spans {
            for word in split_keep_spaces(&span.content) {
                let w = Span::raw(word.clone()).width();
                if used + w > avail && used > indent.chars().count() {
                    if word.trim().is_empty() {
                        continue;
                    }
                    self.lines.push(Line::from(std::mem::take(&mut line)));
                    line.push(Span::styled(indent.clone(), prefix_style));
                    used = indent.chars().count();
                }
                if word.trim().is_empty() && used == indent.chars().count() {
                    continue;
                }
                used += w;
                line.push(Span::styled(word, span.style));
            }
        }
        self.lines.push(Line::from(line));
    }

    /// A table, whole: columns as wide as their widest cell when that
    /// fits, else the widest columns narrowed until the table fits the
    /// width, their cells wrapped at words onto more lines.
    fn table_done(&mut self, rows: Vec<Vec<String>>) {
        let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let mut widths = vec![1usize; cols];
        for row in &rows {
            for (i, c) in row.iter().enumerate() {
                widths[i] = widths[i].max(Span::raw(c.as_str()).width());
            }
        }
        let margin = self.margin();
        let avail = self
            .width
            .max(20)
            .saturating_sub(margin.chars().count() + 3 * (cols - 1));
        fit_columns(&mut widths, avail);
        for (r, row) in rows.iter().enumerate() {
            let style = if r == 0 {
                self.theme.strong
            } else {
                self.theme.base
            };
            let cells: Vec<Vec<String>> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let cell = row.get(i).map(String::as_str).unwrap_or("");
                    textwrap::wrap(cell, textwrap::Options::new((*w).max(1)).break_words(true))
                        .into_iter()
                        .map(|c| c.into_owned())
                        .collect()
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
            for line in 0..height {
                let mut spans = vec![Span::raw(margin.clone())];
                for (i, w) in widths.iter().enumerate() {
                    let text = cells[i].get(line).map(String::as_str).unwrap_or("");
                    let pad = w.saturating_sub(Span::raw(text).width());
                    spans.push(Span::styled(format!("{text}{}", " ".repeat(pad)), style));
                    if i + 1 < cols {
                        spans.push(Span::styled(" │ ", self.theme.dim));
                    }
                }
                self.lines.push(Line::from(spans));
            }
            if r == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.lines.push(Line::from(vec![
                    Span::raw(margin.clone()),
                    Span::styled(rule.join("─┼─"), self.theme.dim),
                ]));
            }
        }
    }
}

/// Narrows the widest of `widths` until they sum to at most `avail` (no
/// column below 6, or below its own width when that is smaller).
fn fit_columns(widths: &mut [usize], avail: usize) {
    while widths.iter().sum::<usize>() > avail {
        let Some((i, w)) = widths.iter().copied().enumerate().max_by_key(|(_, w)| *w) else {
            return;
        };
        if w <= 6 {
            return;
        }
        widths[i] = w - 1;
    }
}

/// Splits into words and runs of spaces, keeping both. Words end where
/// Unicode's line-breaking rules (UAX #14) allow a break, so Chinese text
/// breaks between characters and never before closing punctuation such as
/// `，` or `。`, while Latin words break only at spaces.
fn split_keep_spaces(s: &str) -> Vec<String> {
    use textwrap::WordSeparator;
    let mut out = Vec::new();
    // Leading spaces are a run of their own.
    let trimmed = s.trim_start_matches(' ');
    if trimmed.len() < s.len() {
        out.push(s[..s.len() - trimmed.len()].to_string());
    }
    for w in WordSeparator::UnicodeBreakProperties.find_words(trimmed) {
        if !w.word.is_empty() {
            out.push(w.word.to_string());
        }
        if !w.whitespace.is_empty() {
            out.push(w.whitespace.to_string());
        }
    }
    out
}

/// Lays out Markdown `src` for `width` columns.
pub fn render(src: &str, width: u16, theme: &Theme) -> Doc {
    let mut b = Builder {
        theme,
        width: usize::from(width),
        lines: Vec::new(),
        sections: Vec::new(),
        inline: Vec::new(),
        styles: Vec::new(),
        lists: Vec::new(),
        item_prefix: None,
        quote: 0,
        code: None,
        table: None,
        cell: String::new(),
        link: None,
        heading: None,
    };
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(src, options) {
        match event {
            Event::Start(tag) => match tag {
                Tag::Heading { level, .. } => {
                    b.flush();
                    b.blank();
                    if level == HeadingLevel::H2 {
                        b.sections.push(b.lines.len());
                    }
                    b.heading = Some(level);
                    let prefix = match level {
                        HeadingLevel::H1 => "",
                        HeadingLevel::H2 => "▍",
                        _ => "· ",
                    };
                    let style = if level == HeadingLevel::H1 {
                        theme.title
                    } else {
                        theme.heading
                    };
                    b.styles.push(style);
                    b.text(prefix);
                }
                Tag::Paragraph => b.flush(),
                Tag::BlockQuote(_) => {
                    b.flush();
                    b.quote += 1;
                    b.styles.push(theme.quote);
                }
                Tag::CodeBlock(kind) => {
                    b.flush();
                    let lang = match kind {
                        CodeBlockKind::Fenced(l) => {
                            l.split_whitespace().next().unwrap_or("").to_string()
                        }
                        CodeBlockKind::Indented => String::new(),
                    };
                    b.code = Some((lang, String::new()));
                }
                Tag::List(start) => {
                    b.flush();
                    b.lists.push(ListLevel { next: start });
                }
                Tag::Item => {
                    b.flush();
                    let marker = match b.lists.last_mut() {
                        Some(ListLevel { next: Some(n) }) => {
                            let m = format!("{n}. ");
                            *n += 1;
                            m
                        }
                        _ => "• ".to_string(),
                    };
                    b.item_prefix = Some(marker);
                }
                Tag::Emphasis => b.styles.push(b.style().patch(theme.emphasis)),
                Tag::Strong => b.styles.push(b.style().patch(theme.strong)),
                Tag::Strikethrough => b.styles.push(b.style().patch(theme.dim)),
                Tag::Link { dest_url, .. } => {
                    b.link = Some(dest_url.to_string());
                    b.styles.push(b.style().patch(theme.link));
                }
                Tag::Table(_) => {
                    b.flush();
                    b.table = Some(Vec::new());
                }
                Tag::TableHead | Tag::TableRow => {
                    if let Some(t) = b.table.as_mut() {
                        t.push(Vec::new());
                    }
                }
                Tag::TableCell => b.cell.clear(),
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Heading(_) => {
                    b.styles.pop();
                    b.flush();
                    if b.heading.take().is_some() {
                        b.blank();
                    }
                }
                TagEnd::Paragraph => {
                    b.flush();
                    if b.lists.is_empty() {
                        b.blank();
                    }
                }
                TagEnd::BlockQuote(_) => {
                    b.flush();
                    b.quote = b.quote.saturating_sub(1);
                    b.styles.pop();
                    b.blank();
                }
                TagEnd::CodeBlock => {
                    if let Some((lang, code)) = b.code.take() {
                        let margin = b.margin();
                        for line in highlight::highlight(code.trim_end_matches('\n'), &lang, theme)
                        {
                            let mut spans = vec![Span::styled(format!("{margin}  │ "), theme.dim)];
                            spans.extend(line.spans);
                            b.lines.push(Line::from(spans));
                        }
                        b.blank();
                    }
                }
                TagEnd::List(_) => {
                    b.flush();
                    b.lists.pop();
                    if b.lists.is_empty() {
                        b.blank();
                    }
                }
                TagEnd::Item => b.flush(),
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                    b.styles.pop();
                }
                TagEnd::Link => {
                    b.styles.pop();
                    if let Some(url) = b.link.take() {
                        b.inline.push(Span::styled(format!(" ⟨{url}⟩"), theme.dim));
                    }
                }
                TagEnd::TableCell => {
                    let cell = std::mem::take(&mut b.cell);
                    if let Some(row) = b.table.as_mut().and_then(|t| t.last_mut()) {
                        row.push(cell.trim().to_string());
                    }
                }
                TagEnd::Table => {
                    if let Some(rows) = b.table.take() {
                        b.table_done(rows);
                        b.blank();
                    }
                }
                _ => {}
            },
            Event::Text(t) => b.text(&t),
            Event::Code(t) => {
                if b.table.is_some() {
                    b.cell.push_str(&t);
                } else {
                    b.inline.push(Span::styled(
                        t.to_string(),
                        b.style().patch(theme.code).patch(theme.accent),
                    ));
                }
            }
            Event::SoftBreak => b.text(" "),
            Event::HardBreak => b.flush(),
            Event::Rule => {
                b.flush();
                let w = b.width.min(60);
                b.lines
                    .push(Line::from(Span::styled("─".repeat(w), theme.dim)));
                b.blank();
            }
            _ => {}
        }
    }
    b.flush();
    while b.lines.last().is_some_and(|l| l.width() == 0) {
        b.lines.pop();
    }
    Doc {
        lines: b.lines,
        sections: b.sections,
        width,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(l: &Line<'_>) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn chinese_prose_wraps_between_characters_within_the_width() {
        let para = "桶模式把同一个传感器连续的若干条读数合并进一个文档，也就是一个“桶”，每个桶的容量有固定上限。查询一天的读数，只需要取回少数几个桶，而不是一千多个彼此独立的文档。";
        for width in [30u16, 41, 57] {
            let doc = render(para, width, &Theme::no_color());
            assert!(doc.lines.len() >= 3, "{width}: {:?}", doc.lines);
            let mut joined = String::new();
            for l in &doc.lines {
                let t = text_of(l);
                assert!(
                    l.width() <= usize::from(width),
                    "{width}: {t:?} is {} wide",
                    l.width()
                );
                let body = t.trim_start();
                assert!(
                    !body.starts_with(['，', '。', '”', '）', '、', '：']),
                    "{width}: a line starts with closing punctuation: {t:?}"
                );
                joined.push_str(body);
            }
            // Nothing lost, nothing added (no spaces between characters).
            assert_eq!(joined, para, "{width}");
        }
    }

    #[test]
    fn latin_words_still_break_only_at_spaces() {
        let doc = render(
            "The bucket pattern groups consecutive readings of one sensor into one document.",
            24,
            &Theme::no_color(),
        );
        let words: Vec<String> = doc
            .lines
            .iter()
            .flat_map(|l| {
                text_of(l)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            words.join(" "),
            "The bucket pattern groups consecutive readings of one sensor into one document."
        );
        assert!(doc.lines.iter().all(|l| l.width() <= 24));
    }
}
