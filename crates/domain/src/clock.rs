//! What time it is, as the code that stamps and compares times asks for it. The program
//! reads the system's clock; a test hands the store a [`SettableClock`] and moves it
//! forward, so that "later" is a fact of the test rather than a sleep.

use std::fmt;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that says the time it was set to, until it is moved.
#[derive(Debug, Clone)]
pub struct SettableClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl SettableClock {
    /// A clock that starts at `start`.
    pub fn at(start: DateTime<Utc>) -> Self {
        SettableClock {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Moves the clock forward by `step`.
    pub fn advance(&self, step: Duration) {
        let mut now = self
            .now
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *now += step;
    }
}

impl Clock for SettableClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .now
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The clock the program runs on, shared.
pub fn system_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settable_clock_says_its_time_until_it_is_moved() {
        let start = Utc::now();
        let clock = SettableClock::at(start);
        assert_eq!(clock.now(), start);
        assert_eq!(clock.now(), start, "no time passes by itself");
        clock.advance(Duration::seconds(90));
        assert_eq!(clock.now(), start + Duration::seconds(90));
    }
}
