//! Where events come from: a thread blocked on crossterm's `read` (so the
//! UI thread never polls), background tasks and signals, all merged into
//! one channel the event loop blocks on. Also maps terminal events to
//! actions through keys.rs.

use std::sync::mpsc::Sender;

use ratatui::crossterm::event::{self as ct, MouseButton, MouseEventKind};

use super::action::{Action, TaskMsg};
use super::keys::{self, KeyContext};

/// Everything the event loop wakes up for.
#[derive(Debug)]
pub enum Event {
    Term(ct::Event),
    Task(TaskMsg),
    /// SIGINT, SIGTERM or SIGHUP: leave cleanly.
    Signal,
}

/// Starts the input thread. It ends when the receiver is gone; if the
/// terminal stops producing events it asks the loop to quit.
pub fn spawn_input_reader(tx: Sender<Event>) {
    std::thread::Builder::new()
        .name("schemalab-input".into())
        .spawn(move || {
            loop {
                match ct::read() {
                    Ok(ev) => {
                        if tx.send(Event::Term(ev)).is_err() {
                            break;
                        }
                    }
                    // The terminal is gone: leave rather than wait forever.
                    Err(_) => {
                        let _ = tx.send(Event::Signal);
                        break;
                    }
                }
            }
        })
        .map(|_| ())
        .unwrap_or_default();
}

/// Maps a terminal event to an action in the given key context.
pub fn to_action(ctx: KeyContext, ev: &ct::Event) -> Option<Action> {
    match ev {
        ct::Event::Key(key) => keys::action_for(ctx, *key),
        ct::Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollUp => Some(Action::ScrollUp),
            MouseEventKind::ScrollDown => Some(Action::ScrollDown),
            MouseEventKind::Down(MouseButton::Left) => Some(Action::Click {
                column: m.column,
                row: m.row,
            }),
            _ => None,
        },
        ct::Event::Resize(width, height) => Some(Action::Resize {
            width: *width,
            height: *height,
        }),
        _ => None,
    }
}
