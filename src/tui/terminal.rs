//! Terminal safety. Raw mode, the alternate screen and mouse capture are
//! entered by [`Guard::new`] and left on every exit path: normal return and
//! `?` errors (Drop); a panic in any thread (a process-wide hook, installed
//! by [`install_panic_hook`] before the TUI starts any thread, restores the
//! terminal *before* the message is printed, so it is readable, and makes
//! the TUI leave); and every terminating signal a process may catch
//! (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
//! SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR), turned into an event so the
//! loop unwinds through Drop, with a watchdog that restores and exits if the
//! loop does not answer in time.
//!
//! Panics on the embedded server's threads are the exception: the server
//! turns them into error replies and carries on, so the TUI keeps running
//! and prints their messages after it has restored the terminal.

use std::io::{Stdout, stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use super::event::Event;

/// True while the terminal is raw and on the alternate screen.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Set once a panic outside the server has ended the TUI.
static PANICKED: AtomicBool = AtomicBool::new(false);
/// Where the panic hook asks the event loop to leave.
static QUIT: Mutex<Option<Sender<Event>>> = Mutex::new(None);
/// Panic messages held back while the screen belonged to the TUI.
static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Threads of the embedded server: a panic there is answered as an error
/// reply by the server, so it does not end the TUI.
const SERVER_THREADS: &[&str] = &["schemalab-wire", "schemalab-server"];
/// How long the event loop has to leave after a signal before the signal
/// thread restores the terminal and exits by itself.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);

/// Owns the terminal while the TUI runs.
pub struct Guard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Guard {
    /// Enter raw mode and the alternate screen; `quit` is where a panic on
    /// another thread asks the event loop to leave.
    pub fn new(quit: Sender<Event>) -> std::io::Result<Guard> {
        install_panic_hook();
        *QUIT.lock().unwrap_or_else(PoisonError::into_inner) = Some(quit);
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
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
        *QUIT.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Whether the TUI still owns the terminal (false once a panic or a signal
/// has given it back: the loop must not draw again).
pub fn active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}

/// Puts the terminal back; safe to call more than once and from any thread.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(stdout(), DisableMouseCapture, LeaveAlternateScreen);
    }
}

/// Whether a panic (outside the embedded server) made the TUI leave.
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

/// Panic messages from the server's threads held back while the TUI owned
/// the screen; the caller prints them once the terminal is restored.
pub fn take_held_messages() -> Vec<String> {
    std::mem::take(&mut *HELD.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Installs the process-wide panic hook (once). Call it before starting
/// any thread, so no panic can find the terminal raw without it.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A panic inside an embedded server's command becomes that
            // command's error reply: the workbench goes on, screen untouched.
            if schemalab_wire::cmd::panic_will_be_caught() {
                return;
            }
            if !active() {
                previous(info);
                return;
            }
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("");
            if SERVER_THREADS.contains(&name) {
                HELD.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(format!("thread '{name}' {info}"));
                return;
            }
            restore();
            PANICKED.store(true, Ordering::SeqCst);
            previous(info);
            if let Some(tx) = QUIT.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                let _ = tx.send(Event::Signal);
            }
        }));
    });
}

/// Every signal whose default action ends the process and which a process
/// may catch (SIGKILL and SIGSTOP cannot be; SIGSEGV, SIGBUS, SIGFPE and
/// SIGILL mean memory is not to be trusted and are left to the default).
#[cfg(unix)]
const SIGNALS: &[(i32, &str)] = &[
    (1, "SIGHUP"),
    (2, "SIGINT"),
    (3, "SIGQUIT"),
    (15, "SIGTERM"),
    (10, "SIGUSR1"),
    (12, "SIGUSR2"),
    (14, "SIGALRM"),
    (26, "SIGVTALRM"),
    (27, "SIGPROF"),
    (24, "SIGXCPU"),
    (25, "SIGXFSZ"),
    (29, "SIGIO"),
    (30, "SIGPWR"),
];

/// Listens for termination signals on a thread of its own (so a busy
/// runtime cannot delay it): the first one asks the event loop to leave;
/// if the loop has not given the terminal back within [`SIGNAL_GRACE`],
/// this thread restores it and exits with 128 + the signal number.
pub fn spawn_signal_listener(tx: Sender<Event>) -> std::io::Result<()> {
    #[cfg(all(unix, target_os = "linux"))]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        // Register on this thread, before returning, so no signal arrives
        // between the TUI taking the terminal and the handlers existing.
        let mut streams = Vec::new();
        {
            let _entered = rt.enter();
            for (number, name) in SIGNALS {
                streams.push((*number, *name, signal(SignalKind::from_raw(*number))?));
            }
        }
        std::thread::Builder::new()
            .name("schemalab-signals".into())
            .spawn(move || {
                let (number, name) = rt.block_on(async move {
                    let waits = streams.iter_mut().map(|(n, name, s)| {
                        let (n, name) = (*n, *name);
                        Box::pin(async move {
                            s.recv().await;
                            (n, name)
                        })
                    });
                    futures_util::future::select_all(waits).await.0
                });
                let _ = tx.send(Event::Signal);
                let start = Instant::now();
                while active() && start.elapsed() < SIGNAL_GRACE {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if active() {
                    restore();
                    eprintln!("schemalab: {name}: the interface did not stop in time; leaving");
                    std::process::exit(128 + number);
                }
            })?;
    }
    #[cfg(not(all(unix, target_os = "linux")))]
    {
        let _ = tx;
    }
    Ok(())
}
