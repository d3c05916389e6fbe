//! Counts the cores other processes leave free, so a launch never asks for
//! more threads than the machine can run at once.
//!
//! Every `WINDOW` (100 ms) the pool reads the machine's CPU time (`/proc/stat`,
//! every core) and this process's (`/proc/self/stat`, every thread), in
//! clock ticks. The time the machine spent busy outside this process, over
//! the window's length, is how many cores others keep busy; the rest are
//! free to us. With another process spinning on one of two cores, one core
//! is free and launches run on the caller's thread alone: two threads
//! would share a core with it, and a launch would wait for whichever of
//! them the scheduler had set aside. Where `/proc` cannot be read (not
//! Linux), nothing is limited.

use std::time::{Duration, Instant};

/// How often the counts are read again: long enough for the clock's
/// ticks (usually 100 a second, 10 per core in a window) to tell a busy
/// core from an idle one, short enough that a launch follows a change
/// within a tenth of a second.
const WINDOW: Duration = Duration::from_millis(100);

/// CPU time in clock ticks: the machine's busy and total time over every
/// core (of the `cores` `/proc/stat` lists), and this process's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ticks {
    busy: u64,
    total: u64,
    ours: u64,
    cores: usize,
}

/// The machine's `(busy, total)` ticks from `/proc/stat`'s first line
/// (`cpu user nice system idle iowait irq softirq steal ...`), and the
/// cores it counts (its `cpuN` lines).
fn parse_machine(stat: &str) -> Option<(u64, u64, usize)> {
    let line = stat.lines().next()?;
    let mut f = line.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [user, nice, system, idle, iowait, irq, softirq, steal] = v[..] else {
        return None;
    };
    let busy = user
        .checked_add(nice)?
        .checked_add(system)?
        .checked_add(irq)?
        .checked_add(softirq)?
        .checked_add(steal)?;
    let cores = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some((busy, busy.checked_add(idle)?.checked_add(iowait)?, cores))
}

/// This process's user and system ticks from `/proc/self/stat` (fields 14
/// and 15; the command name, field 2, may hold spaces and parentheses, so
/// fields are counted after its last `)`).
fn parse_process(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    utime.checked_add(stime)
}

fn read() -> Option<Ticks> {
    let machine = std::fs::read_to_string("/proc/stat").ok()?;
    let process = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (busy, total, cores) = parse_machine(&machine)?;
    Some(Ticks {
        busy,
        total,
        ours: parse_process(&process)?,
        cores,
    })
}

/// Threads a launch may use, out of `want`, when others kept `before ->
/// after`'s busy time: the cores they left free, rounded to the nearest,
/// at least one (the caller's own thread). Every core of the machine
/// counts, not only those this process may use: the ticks count them all.
fn allowed(before: Ticks, after: Ticks, want: usize) -> usize {
    let cores = after.cores;
    let total = after.total.saturating_sub(before.total);
    if total == 0 || cores == 0 {
        return want;
    }
    let busy = after.busy.saturating_sub(before.busy);
    let ours = after.ours.saturating_sub(before.ours);
    let others = busy.saturating_sub(ours) as f64 * cores as f64 / total as f64;
    let free = (cores as f64 - others + 0.5).floor().max(1.0) as usize;
    want.min(free)
}

/// The pool's view of the free cores.
#[derive(Default)]
pub(crate) struct FreeCores {
    /// The last reading and when it was taken.
    last: Option<(Instant, Ticks)>,
    /// The threads the last window allowed.
    limit: Option<usize>,
}

impl FreeCores {
    /// Threads a launch asking for `want` may use now.
    pub(crate) fn limit(&mut self, want: usize) -> usize {
        let now = Instant::now();
        let due = self.last.map_or(true, |(t, _)| now - t >= WINDOW);
        if due {
            if let Some(t) = read() {
                if let Some((_, before)) = self.last {
                    self.limit = Some(allowed(before, t, usize::MAX));
                }
                self.last = Some((now, t));
            }
        }
        self.limit.map_or(want, |l| want.min(l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_machine_and_the_process() {
        let m = "cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n";
        assert_eq!(parse_machine(m), Some((161, 1181, 1)));
        assert_eq!(parse_machine("intr 1 2 3"), None);
        assert_eq!(parse_machine("cpu 1 2"), None);
        let p = "4242 (tile (x) y) R 1 2 3 4 5 6 7 8 9 10 70 30 0 0 20 0";
        assert_eq!(parse_process(p), Some(100));
        assert_eq!(parse_process("4242 (tile) R 1"), None);
    }

    #[test]
    fn a_busy_core_elsewhere_leaves_one_of_two() {
        let t = |busy, total, ours| Ticks {
            busy,
            total,
            ours,
            cores: 2,
        };
        // 2 cores, 100 ticks each over the window (200 in all).
        // Another process spinning on one core, ours idle.
        assert_eq!(allowed(t(0, 0, 0), t(100, 200, 0), 2), 1);
        // Both cores busy with our own threads: all free to us.
        assert_eq!(allowed(t(0, 0, 0), t(200, 200, 200), 2), 2);
        // An idle machine.
        assert_eq!(allowed(t(0, 0, 0), t(5, 200, 0), 2), 2);
        // Everything busy elsewhere: still the caller's own thread.
        assert_eq!(allowed(t(0, 0, 0), t(200, 200, 0), 2), 1);
        // A quarter core busy elsewhere rounds to none.
        assert_eq!(allowed(t(0, 0, 0), t(25, 200, 0), 2), 2);
        // No time passed: nothing is known.
        assert_eq!(allowed(t(5, 9, 1), t(5, 9, 1), 2), 2);
    }

    #[test]
    fn the_limit_is_at_least_one_thread() {
        let mut f = FreeCores::default();
        assert!(f.limit(4) >= 1);
        assert!(f.limit(1) == 1);
    }
}
