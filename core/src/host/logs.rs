//! Core's log events as a host language receives them. Core logs with
//! `tracing` and installs no subscriber; each binding installs one that
//! hands events to its host (Python `logging`, a Node function, a C
//! callback). What they all need is here, once: the text of an event, the
//! guard against an event logged while one is being handed over on the
//! same thread, and the ranking of levels the hosts' settings count in.

use std::cell::Cell;
use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level};

/// An event's text: its message, then its other fields as ` name=value`
/// (`OpenTelemetry export failed url="..." error=...`).
///
/// ```
/// // In a binding's `tracing_subscriber::Layer::on_event`:
/// fn on_event(event: &tracing::Event<'_>) -> String {
///     ferromcp::host::logs::event_text(event)
/// }
/// ```
pub fn event_text(event: &Event<'_>) -> String {
    let mut text = EventText::default();
    event.record(&mut text);
    text.finish()
}

#[derive(Default)]
struct EventText {
    message: String,
    fields: String,
}

impl Visit for EventText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

impl EventText {
    fn finish(mut self) -> String {
        if self.message.is_empty() {
            // Fields only: no leading space.
            return self.fields.trim_start().to_owned();
        }
        self.message.push_str(&self.fields);
        self.message
    }
}

/// 1 (error) to 5 (trace): a host's "this level or more severe" setting is
/// a number compared with this.
pub fn level_rank(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

thread_local! {
    static HANDLING: Cell<bool> = const { Cell::new(false) };
}

/// Held while a binding hands one event to its host. An event logged
/// meanwhile on the same thread (a field whose formatting logs, a host
/// callback that reaches core) gets no guard and is dropped, instead of
/// re-entering the binding's locks.
pub struct Handling(());

impl Handling {
    /// The guard, or `None` when this thread is handing an event over
    /// already (or is being torn down).
    pub fn enter() -> Option<Handling> {
        let entered = HANDLING.try_with(|h| !h.replace(true)).unwrap_or(false);
        entered.then_some(Handling(()))
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        let _ = HANDLING.try_with(|h| h.set(false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_event_on_the_same_thread_is_refused_until_the_first_is_done() {
        let first = Handling::enter();
        assert!(first.is_some());
        assert!(Handling::enter().is_none());
        drop(first);
        assert!(Handling::enter().is_some());
    }

    #[test]
    fn levels_rank_from_error_to_trace() {
        assert!(level_rank(&Level::ERROR) < level_rank(&Level::WARN));
        assert_eq!(level_rank(&Level::TRACE), 5);
    }
}
