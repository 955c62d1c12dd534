//! Terminal safety. Raw mode, the alternate screen and mouse capture are
//! entered by [`Guard::new`] and left on every exit path: normal return and
//! `?` errors (Drop), panics (a hook that restores *before* the default hook
//! prints, so the message is readable), and SIGINT/SIGTERM/SIGHUP (turned
//! into an event so the loop unwinds through Drop).

use std::io::{Stdout, stdout};
use std::sync::mpsc::Sender;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use super::event::Event;

/// Owns the terminal while the TUI runs.
pub struct Guard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Guard {
    pub fn new() -> std::io::Result<Guard> {
        install_panic_hook();
        enable_raw_mode()?;
        let mut out = stdout();
        if let Err(e) = execute!(out, EnterAlternateScreen, EnableMouseCapture) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(out)) {
            Ok(terminal) => Ok(Guard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
        let _ = self.terminal.show_cursor();
    }
}

/// Puts the terminal back; safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(stdout(), DisableMouseCapture, LeaveAlternateScreen);
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // A panic inside an embedded server's command becomes that
        // command's error reply: the workbench goes on, screen untouched.
        if crate::wire::cmd::panic_will_be_caught() {
            return;
        }
        restore();
        previous(info);
    }));
}

/// Forwards termination signals to the event loop.
pub fn spawn_signal_listener(rt: &tokio::runtime::Handle, tx: Sender<Event>) {
    #[cfg(unix)]
    rt.spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
        let _ = tx.send(Event::Signal);
    });
    #[cfg(not(unix))]
    {
        let _ = (rt, tx);
    }
}
