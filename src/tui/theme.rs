//! Colours and emphasis. Three themes: normal, presenter (high contrast for a
//! projector) and monochrome for `NO_COLOR` (https://no-color.org), where
//! meaning is carried by bold/underline/reverse and by the text itself
//! (✓/✗ marks, "×" factors), never by colour alone.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeKind {
    Normal,
    Presenter,
    NoColor,
}

/// Every style a screen uses; screens never build colours themselves.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub kind: ThemeKind,
    pub base: Style,
    pub dim: Style,
    pub title: Style,
    pub heading: Style,
    pub accent: Style,
    pub selected: Style,
    pub border: Style,
    pub status: Style,
    pub footer_key: Style,
    pub footer_label: Style,
    pub good: Style,
    pub bad: Style,
    pub warn: Style,
    pub bar_a: Style,
    pub bar_b: Style,
    pub code: Style,
    pub quote: Style,
    pub link: Style,
    pub emphasis: Style,
    pub strong: Style,
    pub keyword: Style,
    pub string: Style,
    pub number: Style,
    pub comment: Style,
    pub function: Style,
    pub punct: Style,
    /// Extra blank lines between blocks and columns of margin.
    pub spacing: u16,
}

impl Theme {
    pub fn normal() -> Self {
        let fg = |c| Style::new().fg(c);
        Theme {
            kind: ThemeKind::Normal,
            base: Style::new(),
            dim: fg(Color::DarkGray),
            title: fg(Color::Cyan).add_modifier(Modifier::BOLD),
            heading: fg(Color::LightCyan).add_modifier(Modifier::BOLD),
            accent: fg(Color::Yellow),
            selected: Style::new()
                .bg(Color::Blue)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
            border: fg(Color::DarkGray),
            status: Style::new().bg(Color::Rgb(30, 40, 60)).fg(Color::White),
            footer_key: fg(Color::Black).bg(Color::Cyan),
            footer_label: fg(Color::Gray),
            good: fg(Color::Green).add_modifier(Modifier::BOLD),
            bad: fg(Color::Red).add_modifier(Modifier::BOLD),
            warn: fg(Color::Yellow),
            bar_a: fg(Color::Magenta),
            bar_b: fg(Color::Green),
            code: fg(Color::Gray),
            quote: fg(Color::Gray).add_modifier(Modifier::ITALIC),
            link: fg(Color::Blue).add_modifier(Modifier::UNDERLINED),
            emphasis: Style::new().add_modifier(Modifier::ITALIC),
            strong: Style::new().add_modifier(Modifier::BOLD),
            keyword: fg(Color::Magenta),
            string: fg(Color::Green),
            number: fg(Color::LightYellow),
            comment: fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            function: fg(Color::LightBlue),
            punct: fg(Color::Gray),
            spacing: 0,
        }
    }

    /// High contrast on black, bold text, generous spacing.
    pub fn presenter() -> Self {
        let fg = |c| Style::new().fg(c).bg(Color::Black);
        Theme {
            kind: ThemeKind::Presenter,
            base: fg(Color::White),
            dim: fg(Color::Gray),
            title: fg(Color::LightYellow).add_modifier(Modifier::BOLD),
            heading: fg(Color::LightYellow).add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            accent: fg(Color::LightCyan).add_modifier(Modifier::BOLD),
            selected: Style::new()
                .bg(Color::White)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            border: fg(Color::White),
            status: Style::new()
                .bg(Color::White)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            footer_key: Style::new()
                .bg(Color::LightYellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            footer_label: fg(Color::White),
            good: fg(Color::LightGreen).add_modifier(Modifier::BOLD),
            bad: fg(Color::LightRed).add_modifier(Modifier::BOLD),
            warn: fg(Color::LightYellow).add_modifier(Modifier::BOLD),
            bar_a: fg(Color::LightMagenta),
            bar_b: fg(Color::LightGreen),
            code: fg(Color::White),
            quote: fg(Color::White).add_modifier(Modifier::ITALIC),
            link: fg(Color::LightCyan).add_modifier(Modifier::UNDERLINED),
            emphasis: fg(Color::White).add_modifier(Modifier::ITALIC | Modifier::BOLD),
            strong: fg(Color::White).add_modifier(Modifier::BOLD),
            keyword: fg(Color::LightMagenta).add_modifier(Modifier::BOLD),
            string: fg(Color::LightGreen),
            number: fg(Color::LightYellow),
            comment: fg(Color::Gray),
            function: fg(Color::LightCyan),
            punct: fg(Color::White),
            spacing: 1,
        }
    }

    /// No colour at all: modifiers only.
    pub fn no_color() -> Self {
        let plain = Style::new();
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            kind: ThemeKind::NoColor,
            base: plain,
            dim: plain,
            title: bold,
            heading: bold.add_modifier(Modifier::UNDERLINED),
            accent: bold,
            selected: Style::new().add_modifier(Modifier::REVERSED),
            border: plain,
            status: Style::new().add_modifier(Modifier::REVERSED),
            footer_key: Style::new().add_modifier(Modifier::REVERSED),
            footer_label: plain,
            good: bold,
            bad: bold.add_modifier(Modifier::UNDERLINED),
            warn: bold,
            bar_a: plain,
            bar_b: plain,
            code: plain,
            quote: Style::new().add_modifier(Modifier::ITALIC),
            link: Style::new().add_modifier(Modifier::UNDERLINED),
            emphasis: Style::new().add_modifier(Modifier::ITALIC),
            strong: bold,
            keyword: bold,
            string: plain,
            number: plain,
            comment: Style::new().add_modifier(Modifier::ITALIC),
            function: plain,
            punct: plain,
            spacing: 0,
        }
    }

    /// Picks the theme: `NO_COLOR` (set and non-empty) wins over presenter
    /// colours but keeps presenter spacing.
    pub fn select(present: bool, no_color: bool) -> Self {
        match (present, no_color) {
            (_, true) => Theme {
                spacing: u16::from(present),
                ..Theme::no_color()
            },
            (true, false) => Theme::presenter(),
            (false, false) => Theme::normal(),
        }
    }

    /// Reads `NO_COLOR` from the environment.
    pub fn no_color_requested() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }
}
