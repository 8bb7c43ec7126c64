//! The process's heap: glibc's allocator keeps freed memory for reuse in per-thread
//! arenas (up to eight per core). Hub runs every store call on the blocking thread pool,
//! so under load many threads allocate and each arena keeps its high-water mark: on the
//! demo data, resident memory after a mixed load was twice what was in use. Two arenas
//! keep it near what is in use without a measurable change in requests per second
//! (`bench/sqlite_tuning.sh` with and without `MALLOC_ARENA_MAX=2`), and trimming after
//! the one-time demo load gives its peak back to the system.
//!
//! Owns: calls into the C allocator. Must not: allocate on behalf of anything else.

/// Caps glibc's malloc arenas at two, unless `MALLOC_ARENA_MAX` says otherwise. Call
/// first thing in `main`, before threads start.
pub fn limit_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes the allocator's tuning; called before any thread
        // of ours exists.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Returns the heap's free memory to the system (after a bulk load).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}
