//! Rendering cost of the experiment view (target: ≤ 2 ms per frame), drawn
//! from the real course and a real tiny run of the bucket lesson (the
//! tests' `support` state) into a TestBackend at 100×30 and 200×60.
#![allow(clippy::unwrap_used)]

// The test binary's helpers; this bench uses a few of them.
#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use schemalab::course::Scale;
use schemalab::tui::action::{Action, TaskMsg};
use schemalab::tui::app::{App, ConnState, EngineStatus};
use schemalab::tui::progress::Progress;
use schemalab::tui::theme::Theme;
use schemalab::tui::{strings, view};

fn comparison(width: u16, height: u16) -> App {
    let mut app = App::new(
        support::course(),
        Theme::normal(),
        false,
        EngineStatus {
            label: strings::EMBEDDED_ENGINE.into(),
            state: ConnState::Connected,
        },
        Scale::Default,
        Progress::default(),
    );
    app.update(Action::Resize { width, height });
    app.update(Action::Digit(1));
    app.update(Action::Digit(0));
    app.update(Action::Run);
    let id = app.run.as_ref().unwrap().id;
    app.update(Action::Task(TaskMsg::RunFinished {
        run_id: id,
        result: Ok(Box::new(support::bucket_report())),
    }));
    app
}

fn bench(c: &mut Criterion) {
    for (w, h) in [(100, 30), (200, 60)] {
        let app = comparison(w, h);
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        c.bench_function(&format!("experiment_view_{w}x{h}"), |b| {
            b.iter(|| {
                terminal
                    .draw(|f| view::render(&app, f))
                    .map(|_| ())
                    .unwrap()
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
