//! SIGINT, SIGTERM and SIGHUP end the command without leaving staging or
//! build directories behind: the handler only writes the signal's number
//! to a pipe (all a handler may safely do); a thread reading the pipe
//! removes every path registered in `tile_ir::temp_paths`, restores the
//! default action and raises the signal again, so the exit status is the
//! signal's as usual.

/// Installs the handlers (once per process; later calls do nothing).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return;
        }
        WRITE_END.store(fds[1], std::sync::atomic::Ordering::SeqCst);
        let read_end = fds[0];
        let spawned = std::thread::Builder::new()
            .name("tile-signals".into())
            .spawn(move || loop {
                let mut sig = 0u8;
                // SAFETY: reads one byte into `sig`.
                let n = unsafe { libc::read(read_end, (&mut sig as *mut u8).cast(), 1) };
                if n == 1 {
                    tile_ir::temp_paths::remove_all();
                    // SAFETY: restoring the default action and raising the
                    // signal ends the process as the signal would have.
                    unsafe {
                        libc::signal(sig as libc::c_int, libc::SIG_DFL);
                        libc::raise(sig as libc::c_int);
                    }
                } else if n == 0 {
                    return;
                }
            });
        if spawned.is_err() {
            return;
        }
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: `on_signal` only calls `write`, which is
            // async-signal-safe.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    });
}

static WRITE_END: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = WRITE_END.load(std::sync::atomic::Ordering::SeqCst);
    let byte = sig as u8;
    // SAFETY: `write` is async-signal-safe; a failed write loses nothing
    // but the clean-up.
    unsafe {
        libc::write(fd, (&byte as *const u8).cast(), 1);
    }
}
