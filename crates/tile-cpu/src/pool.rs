//! A persistent pool of worker threads shared by every module.
//!
//! Workers are started once and grow on demand to the largest thread count
//! asked for; a launch never spawns threads. A launch posts a job, runs it
//! on the calling thread too, and returns once every worker that joined the
//! job has left it, so the job may borrow from the caller's stack. Jobs
//! claim their own work (an atomic counter over slices), so the caller
//! alone can finish a job. When another launch holds the pool, the job runs
//! on the calling thread alone, which gives the same result.
//!
//! Joining is optional: when the caller has run out of work it closes the
//! job, and a worker that had not joined by then (asleep, or descheduled on
//! a busy machine) skips it. The caller waits only for workers running a
//! slice, never for one that has yet to be scheduled: a machine whose other
//! cores are busy makes a launch at most as slow as running it on the
//! caller's thread, plus the slices workers had claimed.
//!
//! The pool also watches how launches go: when the caller waits for
//! workers longer than half its own share of the work (`LATE_SLACK`
//! aside), or no worker made it into the job although they were spinning
//! after the previous one, twice in a row, the cores are taken by someone
//! else, and launches run on the caller's thread for `BACKOFF` before the
//! pool tries its workers again; each time the first try finds them late
//! again, the wait doubles (up to `BACKOFF_MAX`), and a launch whose
//! workers keep up resets it.
//!
//! Before either, a launch asks for no more threads than the cores other
//! processes leave free (`count_free_cores.rs`, read every 100 ms): with
//! one of two cores kept busy elsewhere, launches run on the caller's
//! thread until it is free again.
//!
//! After a job, workers spin for a short while (`SPIN`) before sleeping on
//! the condition variable: kernels launched back to back then start in
//! about a microsecond instead of a futex wake-up each.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker (or a waiting launcher) spins before sleeping.
const SPIN: Duration = Duration::from_micros(200);

/// How long launches stay on the caller's thread once workers were found
/// late.
const BACKOFF: Duration = Duration::from_millis(20);
/// Waiting for workers up to this long (beyond half the caller's own
/// time) is not late.
const LATE_SLACK: Duration = Duration::from_micros(20);
/// The longest such stretch.
const BACKOFF_MAX: Duration = Duration::from_millis(640);

type JobFn = dyn Fn() + Sync;

#[derive(Clone, Copy)]
struct Job {
    f: *const JobFn,
    participants: usize,
}

// SAFETY: the pointer is only dereferenced while the launching thread
// waits for the job to finish, and the closure is `Sync`.
unsafe impl Send for Job {}

struct State {
    generation: u64,
    job: Option<Job>,
    workers: usize,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    /// A mirror of `generation`, for spinning without the lock.
    posted: AtomicU64,
    /// The current job's gate: its generation (high 32 bits), whether it
    /// is closed (`CLOSED`), and how many workers are inside it (the low
    /// bits).
    gate: AtomicU64,
    /// Workers that entered the current job.
    joined: AtomicU64,
}

/// The gate bit that closes a job to workers not yet inside it.
const CLOSED: u64 = 1 << 31;
/// The gate bits that count workers inside the job.
const INSIDE: u64 = CLOSED - 1;

/// The gate of an open, empty job of generation `g`.
fn open_gate(g: u64) -> u64 {
    (g & 0xffff_ffff) << 32
}

/// Spins until `ready()` or `SPIN` has passed; true when ready.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() > SPIN {
            return ready();
        }
    }
}

/// The process-wide pool.
pub(crate) struct Pool {
    shared: &'static Shared,
    launch: Mutex<Health>,
}

/// What the pool learnt from its last launches (held with the launch
/// lock).
#[derive(Default)]
struct Health {
    /// Consecutive launches whose workers were late.
    strikes: u32,
    /// Until when launches stay on the caller's thread.
    serial_until: Option<Instant>,
    /// The next stretch on the caller's thread (zero: `BACKOFF`).
    backoff: Duration,
    /// When the last launch that used the workers ended.
    last: Option<Instant>,
    /// The cores other processes leave free.
    free: crate::count_free_cores::FreeCores,
}

static POOL: OnceLock<Pool> = OnceLock::new();

/// The pool (started empty; workers come with the first parallel launch).
pub(crate) fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                job: None,
                workers: 0,
            }),
            wake: Condvar::new(),
            posted: AtomicU64::new(0),
            gate: AtomicU64::new(open_gate(0) | CLOSED),
            joined: AtomicU64::new(0),
        }));
        Pool {
            shared,
            launch: Mutex::new(Health::default()),
        }
    })
}

impl Pool {
    /// Runs `f` on `threads` threads (the caller and `threads - 1`
    /// workers); returns when every one has returned from `f`. When the
    /// launch runs on the caller's thread alone, it runs `alone` instead
    /// (the whole work in one call, not claimed slice by slice).
    pub(crate) fn run(&self, threads: usize, f: &(dyn Fn() + Sync), alone: &dyn Fn()) {
        let Ok(mut health) = self.launch.try_lock() else {
            alone();
            return;
        };
        if let Some(until) = health.serial_until {
            if Instant::now() < until {
                alone();
                return;
            }
            health.serial_until = None;
        }
        // Never more threads than the cores others leave free.
        let threads = health.free.limit(threads);
        let helpers = self.grow(threads.saturating_sub(1));
        if helpers == 0 {
            alone();
            return;
        }
        // SAFETY: the lifetime is erased only for the duration of this
        // call: we wait below until no worker uses the pointer.
        let ptr: *const JobFn = unsafe {
            std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const JobFn>(f as *const _)
        };
        {
            let mut st = lock(&self.shared.state);
            st.generation += 1;
            st.job = Some(Job {
                f: ptr,
                participants: helpers,
            });
            self.shared.joined.store(0, Ordering::Release);
            self.shared
                .gate
                .store(open_gate(st.generation), Ordering::Release);
            self.shared.posted.store(st.generation, Ordering::Release);
            self.shared.wake.notify_all();
        }
        let start = Instant::now();
        let mine = catch_unwind(AssertUnwindSafe(f));
        let own = start.elapsed();
        // Every slice is claimed: close the job, then wait for the workers
        // inside it (each running a slice it claimed).
        self.shared.gate.fetch_or(CLOSED, Ordering::AcqRel);
        let inside = || self.shared.gate.load(Ordering::Acquire) & INSIDE == 0;
        if !spin_until(inside) {
            // A worker inside was descheduled: give it the core.
            while !inside() {
                std::thread::yield_now();
            }
        }
        let waited = start.elapsed() - own;
        lock(&self.shared.state).job = None;
        // Late: the caller waited for workers more than half as long as
        // it worked (a worker inside the job lost its core), or no worker
        // made it into the job although they should have been spinning,
        // the last parallel launch having ended less than half a `SPIN`
        // before (after a pause they are asleep, and a no-show says
        // nothing).
        let joined = self.shared.joined.load(Ordering::Acquire);
        let ready = health.last.is_some_and(|t| start - t < SPIN / 2);
        health.last = Some(Instant::now());
        let late = waited > own / 2 + LATE_SLACK || (joined == 0 && ready);
        if !late {
            health.strikes = 0;
            health.backoff = Duration::ZERO;
            return Self::resume(mine);
        }
        health.strikes += 1;
        // After a stretch on the caller's thread, one late try is enough.
        let needed = if health.backoff.is_zero() { 2 } else { 1 };
        if health.strikes >= needed {
            let stretch = health.backoff.max(BACKOFF);
            health.strikes = 0;
            health.serial_until = Some(Instant::now() + stretch);
            health.backoff = (stretch * 2).min(BACKOFF_MAX);
        }
        Self::resume(mine)
    }

    /// Re-raises the caller's panic, if its part of the job panicked.
    fn resume(mine: std::thread::Result<()>) {
        if let Err(p) = mine {
            std::panic::resume_unwind(p);
        }
    }

    /// Starts workers up to `helpers`; returns how many there are (at
    /// most `helpers`).
    fn grow(&self, helpers: usize) -> usize {
        let mut st = lock(&self.shared.state);
        while st.workers < helpers {
            let index = st.workers;
            let shared = self.shared;
            let spawned = std::thread::Builder::new()
                .name(format!("tile-cpu-{index}"))
                .spawn(move || worker(shared, index));
            if spawned.is_err() {
                break;
            }
            st.workers += 1;
        }
        // A job asks only for workers that exist.
        st.workers.min(helpers)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn worker(shared: &'static Shared, index: usize) {
    let mut seen = 0u64;
    loop {
        spin_until(|| shared.posted.load(Ordering::Acquire) != seen);
        let job = {
            let mut st = lock(&shared.state);
            loop {
                if st.generation != seen {
                    seen = st.generation;
                    if let Some(j) = st.job {
                        if index < j.participants {
                            break j;
                        }
                    }
                }
                st = match shared.wake.wait(st) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
            }
        };
        // Enter the job unless it is closed (or already another one).
        let mut g = shared.gate.load(Ordering::Acquire);
        let entered = loop {
            if g >> 32 != seen & 0xffff_ffff || g & CLOSED != 0 {
                break false;
            }
            match shared
                .gate
                .compare_exchange_weak(g, g + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break true,
                Err(now) => g = now,
            }
        };
        if !entered {
            continue;
        }
        shared.joined.fetch_add(1, Ordering::AcqRel);
        // SAFETY: the launcher keeps the closure alive until no worker is
        // inside the job, which happens only after this call returns.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.f)() }));
        shared.gate.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Every slice of every job runs exactly once, whether workers join,
    /// arrive late or are kept busy by other threads launching too.
    #[test]
    fn every_slice_runs_once_under_contention() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let launchers: Vec<_> = (0..2)
            .map(|t| {
                std::thread::spawn(move || {
                    for round in 0..2000usize {
                        let slices = 1 + (round * 7 + t) % 33;
                        let next = AtomicUsize::new(0);
                        let hits: Vec<AtomicUsize> =
                            (0..slices).map(|_| AtomicUsize::new(0)).collect();
                        let job = || loop {
                            let c = next.fetch_add(1, Ordering::Relaxed);
                            if c >= slices {
                                break;
                            }
                            hits[c].fetch_add(1, Ordering::Relaxed);
                        };
                        pool().run(3, &job, &job);
                        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                        if round % 500 == 0 {
                            // A pause: the workers fall asleep.
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                })
            })
            .collect();
        for l in launchers {
            l.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        busy.join().unwrap();
    }
}
