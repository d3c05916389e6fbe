//! A persistent pool of worker threads shared by every module.
//!
//! Workers are started once and grow on demand to the largest thread count
//! asked for; a launch never spawns threads. A launch posts a job, runs it
//! on the calling thread too, and waits until every participating worker
//! has finished it, so the job may borrow from the caller's stack. Jobs
//! claim their own work (an atomic counter over slices). When another
//! launch holds the pool, the job runs on the calling thread alone, which
//! gives the same result.
//!
//! After a job, workers spin for a short while (`SPIN`) before sleeping on
//! the condition variable, and so does the launcher while it waits: kernels
//! launched back to back then start in about a microsecond instead of a
//! futex wake-up each.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker (or a waiting launcher) spins before sleeping.
const SPIN: Duration = Duration::from_micros(200);

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
    pending: usize,
    workers: usize,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    done: Condvar,
    /// Mirrors of `generation` and `pending`, for spinning without the lock.
    posted: AtomicU64,
    remaining: AtomicUsize,
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
    launch: Mutex<()>,
}

static POOL: OnceLock<Pool> = OnceLock::new();

/// The pool (started empty; workers come with the first parallel launch).
pub(crate) fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                job: None,
                pending: 0,
                workers: 0,
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            posted: AtomicU64::new(0),
            remaining: AtomicUsize::new(0),
        }));
        Pool {
            shared,
            launch: Mutex::new(()),
        }
    })
}

impl Pool {
    /// Runs `f` on `threads` threads (the caller and `threads - 1`
    /// workers); returns when every one has returned from `f`.
    pub(crate) fn run(&self, threads: usize, f: &(dyn Fn() + Sync)) {
        let Ok(_guard) = self.launch.try_lock() else {
            f();
            return;
        };
        let helpers = self.grow(threads.saturating_sub(1));
        if helpers == 0 {
            f();
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
            st.pending = helpers;
            self.shared.remaining.store(helpers, Ordering::Release);
            self.shared.posted.store(st.generation, Ordering::Release);
            self.shared.wake.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(f));
        spin_until(|| self.shared.remaining.load(Ordering::Acquire) == 0);
        let mut st = lock(&self.shared.state);
        while st.pending > 0 {
            st = match self.shared.done.wait(st) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        st.job = None;
        drop(st);
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
        // SAFETY: the launcher keeps the closure alive until `pending`
        // reaches zero, which happens only after this call returns.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.f)() }));
        let mut st = lock(&shared.state);
        st.pending -= 1;
        shared.remaining.store(st.pending, Ordering::Release);
        if st.pending == 0 {
            shared.done.notify_all();
        }
    }
}
