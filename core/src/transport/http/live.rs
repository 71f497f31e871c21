//! The listener's table of live connections: what each is doing (its
//! [`Activity`]) and which address it comes from. With it the listener
//! closes the connection that matters least to admit a new one at its
//! connection cap, and counts connections per address (issue #25).
//!
//! Without shedding, a client that opens connections and sends nothing
//! holds every slot until its connections time out, and real clients wait
//! in the kernel's backlog behind the silent ones, wave after wave.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use super::connection::{Activity, ShedClass, Standing};
use crate::rpc::lock_unpoisoned;

/// Why a connection was shed or refused.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cause {
    /// Every slot of `max_connections` (this many) was taken.
    Cap(usize),
    /// The address held `max_connections_per_address` (this many).
    PerAddress(usize),
}

/// The live connections of one listener.
pub(super) struct Live {
    table: Mutex<Table>,
    report: Mutex<Report>,
}

/// What came of asking for a connection to be shed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shed {
    /// One was asked to close, of this class.
    Started(ShedClass),
    /// One is closing already (only when asked to wait for it).
    InProgress,
    /// Every candidate is busy.
    Nothing,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// By id, that is in accept order: the first never-used connection met
    /// is the oldest one.
    entries: BTreeMap<u64, Entry>,
    /// Connections per address, shed or not; an address absent has none.
    per_address: HashMap<IpAddr, usize>,
}

struct Entry {
    peer: IpAddr,
    activity: Arc<Activity>,
}

/// Keeps a connection in the table until dropped (when its task ends).
pub(super) struct Registration {
    live: Arc<Live>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut table = lock_unpoisoned(&self.live.table);
        if let Some(entry) = table.entries.remove(&self.id)
            && let Some(count) = table.per_address.get_mut(&entry.peer)
        {
            *count -= 1;
            if *count == 0 {
                table.per_address.remove(&entry.peer);
            }
        }
    }
}

impl Live {
    pub(super) fn new() -> Live {
        Live {
            table: Mutex::new(Table::default()),
            report: Mutex::new(Report::default()),
        }
    }

    /// Adds a connection from `peer`, tracked through `activity`.
    pub(super) fn register(
        self: &Arc<Self>,
        peer: IpAddr,
        activity: Arc<Activity>,
    ) -> Registration {
        let mut table = lock_unpoisoned(&self.table);
        let id = table.next_id;
        table.next_id += 1;
        table.entries.insert(id, Entry { peer, activity });
        *table.per_address.entry(peer).or_insert(0) += 1;
        Registration {
            live: self.clone(),
            id,
        }
    }

    /// Whether `peer` holds `limit` connections or more, not counting those
    /// being shed (they are on their way out).
    pub(super) fn at_address_limit(&self, peer: IpAddr, limit: usize) -> bool {
        let table = lock_unpoisoned(&self.table);
        // The count is enough below the limit; only at it is the table
        // walked, to leave out the connections being shed.
        if table.per_address.get(&peer).copied().unwrap_or(0) < limit {
            return false;
        }
        let staying = table
            .entries
            .values()
            .filter(|e| e.peer == peer && e.activity.standing() != Standing::Shedding)
            .count();
        staying >= limit
    }

    /// At the connection cap: unless a connection is closing already (its
    /// slot is about to free), asks the one that matters least to close
    /// (see [`Live::shed_one`]).
    pub(super) fn shed_for_cap(&self) -> Shed {
        self.shed(None, true)
    }

    /// Asks the connection that matters least (of those from `only`, if
    /// given) to close: never-used ones first, then idle, then those still
    /// reading a request head; oldest first within each; never a busy one.
    /// Returns its class, or `None` when every candidate is busy.
    pub(super) fn shed_one(&self, only: Option<IpAddr>) -> Option<ShedClass> {
        match self.shed(only, false) {
            Shed::Started(class) => Some(class),
            Shed::InProgress | Shed::Nothing => None,
        }
    }

    /// One pass over the table in accept order, which under a flood of
    /// silent connections ends at its first entries: the one closing
    /// already, or the oldest never-used one (no other can beat it).
    fn shed(&self, only: Option<IpAddr>, wait_for_shedding: bool) -> Shed {
        let table = lock_unpoisoned(&self.table);
        // A candidate can turn busy between being ranked and being shed
        // (`Activity::shed` then refuses): rank again, at most once per
        // candidate.
        for _ in 0..table.entries.len() {
            let mut best: Option<((ShedClass, Instant), &Arc<Activity>)> = None;
            for entry in table.entries.values() {
                if only.is_some_and(|peer| entry.peer != peer) {
                    continue;
                }
                match entry.activity.standing() {
                    Standing::Shedding if wait_for_shedding => return Shed::InProgress,
                    Standing::Shedding | Standing::Busy => {}
                    Standing::Sheddable(class, since) => {
                        if best.is_none_or(|(rank, _)| (class, since) < rank) {
                            best = Some(((class, since), &entry.activity));
                        }
                        // Ids follow accepts, so this is the oldest
                        // never-used one. (A connection closing further on
                        // is not looked for: shedding one more silent
                        // connection than needed is harmless.)
                        if class == ShedClass::New {
                            break;
                        }
                    }
                }
            }
            let Some((_, victim)) = best else {
                return Shed::Nothing;
            };
            if let Some(class) = victim.shed() {
                return Shed::Started(class);
            }
        }
        Shed::Nothing
    }

    /// Logs a shed connection at debug, and a summary of sheds and
    /// refusals at warn, at most once per [`REPORT_EVERY`]: under attack
    /// this happens for every connection.
    pub(super) fn report(&self, event: Option<ShedClass>, cause: Cause) {
        match (event, cause) {
            (Some(class), Cause::Cap(max)) => {
                tracing::debug!(
                    connection = class.name(),
                    max_connections = max,
                    "at the connection cap: closing a connection to admit a new one"
                );
            }
            (Some(class), Cause::PerAddress(max)) => {
                tracing::debug!(
                    connection = class.name(),
                    max_connections_per_address = max,
                    "address at its connection limit: closing its oldest connection to admit a new one"
                );
            }
            (None, Cause::PerAddress(max)) => {
                tracing::debug!(
                    max_connections_per_address = max,
                    "address at its connection limit, all busy: refusing a connection (429)"
                );
            }
            (None, Cause::Cap(_)) => {}
        }
        let mut report = lock_unpoisoned(&self.report);
        report.count(event, cause);
        if report
            .last
            .is_none_or(|last| last.elapsed() >= REPORT_EVERY)
        {
            report.log();
        }
    }

    /// Logs what was counted since the last summary (at shutdown).
    pub(super) fn flush_report(&self) {
        lock_unpoisoned(&self.report).log();
    }
}

/// The shortest interval between two summaries of shed connections.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// Sheds and refusals counted since the last summary.
#[derive(Default)]
struct Report {
    last: Option<Instant>,
    at_cap: [u64; 3],
    per_address: [u64; 3],
    refused: u64,
    max_connections: Option<usize>,
    max_per_address: Option<usize>,
}

impl Report {
    fn count(&mut self, event: Option<ShedClass>, cause: Cause) {
        let index = |class: ShedClass| match class {
            ShedClass::New => 0,
            ShedClass::Idle => 1,
            ShedClass::ReadingHead => 2,
        };
        match (event, cause) {
            (Some(class), Cause::Cap(max)) => {
                self.at_cap[index(class)] += 1;
                self.max_connections = Some(max);
            }
            (Some(class), Cause::PerAddress(max)) => {
                self.per_address[index(class)] += 1;
                self.max_per_address = Some(max);
            }
            (None, Cause::PerAddress(max)) => {
                self.refused += 1;
                self.max_per_address = Some(max);
            }
            (None, Cause::Cap(_)) => {}
        }
    }

    fn log(&mut self) {
        let shed = |counts: [u64; 3]| counts.iter().sum::<u64>();
        if shed(self.at_cap) > 0 {
            let [new, idle, reading] = self.at_cap;
            tracing::warn!(
                max_connections = self.max_connections.unwrap_or_default(),
                never_used = new,
                idle,
                reading_head = reading,
                "at the connection cap: closed connections to admit new ones \
                 (summarised at most every 10 s; each is logged at debug)"
            );
        }
        if shed(self.per_address) > 0 || self.refused > 0 {
            let [new, idle, reading] = self.per_address;
            tracing::warn!(
                max_connections_per_address = self.max_per_address.unwrap_or_default(),
                never_used = new,
                idle,
                reading_head = reading,
                refused_429 = self.refused,
                "addresses at their connection limit: closed their oldest connections \
                 or refused new ones (summarised at most every 10 s; each is logged at debug)"
            );
        }
        *self = Report {
            last: Some(Instant::now()),
            ..Report::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

    #[test]
    fn the_never_used_go_first_then_the_idle_then_the_reading_never_the_busy() {
        let live = Arc::new(Live::new());
        let reading = Arc::new(Activity::new());
        let _r1 = live.register(A, reading.clone());
        reading.bytes_arrived();
        let idle = Arc::new(Activity::new());
        let _r2 = live.register(A, idle.clone());
        drop(idle.begin());
        let busy = Arc::new(Activity::new());
        let _r3 = live.register(A, busy.clone());
        let _busy = busy.begin();
        let older_new = Arc::new(Activity::new());
        let _r4 = live.register(B, older_new.clone());
        let newer_new = Arc::new(Activity::new());
        let _r5 = live.register(A, newer_new.clone());

        assert_eq!(live.shed_for_cap(), Shed::Started(ShedClass::New));
        assert!(older_new.is_shedding() && !newer_new.is_shedding());
        // not another while that one closes
        assert_eq!(live.shed_for_cap(), Shed::InProgress);
        assert_eq!(live.shed_one(None), Some(ShedClass::New));
        assert!(newer_new.is_shedding());
        assert_eq!(live.shed_one(None), Some(ShedClass::Idle));
        assert_eq!(live.shed_one(None), Some(ShedClass::ReadingHead));
        assert_eq!(live.shed_one(None), None, "the busy one stays");
        assert!(!busy.is_shedding());
        // once the closing ones are gone, nothing is left to shed
        let live = Arc::new(Live::new());
        let _r = live.register(A, busy.clone());
        assert_eq!(live.shed_for_cap(), Shed::Nothing);
    }

    #[test]
    fn per_address_counts_leave_out_connections_being_shed() {
        let live = Arc::new(Live::new());
        let first = Arc::new(Activity::new());
        let r1 = live.register(A, first.clone());
        let _r2 = live.register(A, Arc::new(Activity::new()));
        let _r3 = live.register(B, Arc::new(Activity::new()));
        assert!(live.at_address_limit(A, 2));
        assert!(!live.at_address_limit(B, 2));
        // only A's own connections are candidates
        assert_eq!(live.shed_one(Some(A)), Some(ShedClass::New));
        assert!(first.is_shedding());
        assert!(!live.at_address_limit(A, 2));
        drop(r1);
        assert!(!live.at_address_limit(A, 2));
        assert!(live.at_address_limit(A, 1));
    }
}
