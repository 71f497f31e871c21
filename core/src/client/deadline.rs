//! Timeouts that do not count the user's time: while a person is logging
//! in (the OAuth authorize callback is running), a call's timeout and the
//! era probe's are paused, so a first call that needs a login waits for it
//! instead of failing after the default 60 s (or the probe's 5 s) and
//! leaving the user with a consent page that leads nowhere.
//!
//! The deadlines wait on the shared timer thread (`timer`), not on tokio
//! timers: see there why.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

use super::timer;
use crate::Error;
use crate::rpc::lock_unpoisoned;

/// Measures the time spent in user interactions, which timeouts skip.
#[derive(Debug, Default)]
pub(crate) struct InteractionClock {
    state: Mutex<ClockState>,
}

#[derive(Debug, Default)]
struct ClockState {
    /// Interactions that ended, added up.
    finished: Duration,
    /// How many interactions are running, and since when the first began.
    running: usize,
    since: Option<Instant>,
}

impl InteractionClock {
    /// Marks an interaction as running until the guard is dropped.
    pub(crate) fn pause(&self) -> PauseGuard<'_> {
        let mut state = lock_unpoisoned(&self.state);
        if state.running == 0 {
            state.since = Some(Instant::now());
        }
        state.running += 1;
        PauseGuard { clock: self }
    }

    /// Interaction time up to `now`, counting the running one.
    fn excluded(&self, now: Instant) -> Duration {
        let state = lock_unpoisoned(&self.state);
        let running = state
            .since
            .map_or(Duration::ZERO, |since| now.saturating_duration_since(since));
        state.finished + running
    }
}

/// Ends an interaction (see [`InteractionClock::pause`]).
pub(crate) struct PauseGuard<'a> {
    clock: &'a InteractionClock,
}

impl Drop for PauseGuard<'_> {
    fn drop(&mut self) {
        let mut state = lock_unpoisoned(&self.clock.state);
        state.running -= 1;
        if state.running == 0
            && let Some(since) = state.since.take()
        {
            state.finished += Instant::now().saturating_duration_since(since);
        }
    }
}

/// Runs `work` for at most `limit`, not counting interaction time measured
/// by `clock` meanwhile; `Error::Timeout` when it runs out.
pub(crate) async fn timeout_excluding<F: Future>(
    limit: Duration,
    clock: Option<&InteractionClock>,
    work: F,
) -> Result<F::Output, Error> {
    let start = Instant::now();
    let Some(clock) = clock else {
        return tokio::select! {
            biased;
            output = work => Ok(output),
            _ = timer::sleep_until((start + limit).into_std()) => Err(Error::Timeout),
        };
    };
    let excluded_at_start = clock.excluded(start);
    let mut work = std::pin::pin!(work);
    loop {
        // The deadline moves while an interaction runs: sleep to where it
        // is now and look again when that comes.
        let now = Instant::now();
        let deadline = start + limit + clock.excluded(now).saturating_sub(excluded_at_start);
        if deadline <= now {
            return Err(Error::Timeout);
        }
        tokio::select! {
            output = &mut work => return Ok(output),
            _ = timer::sleep_until(deadline.into_std()) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real time (tokio's paused clock needs its test-util feature), in
    // steps far apart enough for a loaded machine.
    const LIMIT: Duration = Duration::from_millis(400);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[tokio::test]
    async fn time_in_an_interaction_does_not_count() {
        let clock = InteractionClock::default();
        let work = async {
            tokio::time::sleep(ms(100)).await;
            let login = clock.pause();
            tokio::time::sleep(ms(1000)).await;
            drop(login);
            tokio::time::sleep(ms(100)).await;
            "done"
        };
        // 1.2 s in all, of which 0.2 s count against the limit.
        let result = timeout_excluding(LIMIT, Some(&clock), work).await;
        assert_eq!(result.ok(), Some("done"));
    }

    #[tokio::test]
    async fn time_outside_interactions_still_runs_out() {
        let clock = InteractionClock::default();
        let work = async {
            let login = clock.pause();
            tokio::time::sleep(ms(500)).await;
            drop(login);
            tokio::time::sleep(ms(5000)).await;
        };
        let result = timeout_excluding(LIMIT, Some(&clock), work).await;
        assert!(matches!(result, Err(Error::Timeout)));
        // Without a clock the limit is plain wall time.
        let result = timeout_excluding(LIMIT, None, tokio::time::sleep(ms(5000))).await;
        assert!(matches!(result, Err(Error::Timeout)));
    }

    #[tokio::test]
    async fn an_interaction_that_ended_before_the_call_is_not_subtracted() {
        let clock = InteractionClock::default();
        {
            let _earlier = clock.pause();
            tokio::time::sleep(ms(1000)).await;
        }
        let started = Instant::now();
        let result = timeout_excluding(LIMIT, Some(&clock), tokio::time::sleep(ms(5000))).await;
        assert!(matches!(result, Err(Error::Timeout)));
        assert!(started.elapsed() < ms(1000), "{:?}", started.elapsed());
    }
}
