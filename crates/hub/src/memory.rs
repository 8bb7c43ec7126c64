//! The process's heap, in two allocators.
//!
//! - **Rust's allocations** (requests, answers, JSON) go to mimalloc, set as the global
//!   allocator in `main.rs`. Every store call runs on the blocking thread pool, so under
//!   load a page is built on one thread and freed on another, by many threads at once.
//!   With glibc's allocator (two arenas shared by all those threads), `malloc`, `free`
//!   and chunk consolidation took 12–17 % of a list page's samples under `wrk -c8`.
//!   mimalloc gives each thread its own heap, takes a free from another thread without
//!   a lock, and returns freed pages to the system after a short delay (so the
//!   one-time demo load's peak goes back too).
//! - **SQLite's and other C code's allocations** stay with glibc. Its allocator keeps
//!   freed memory for reuse in per-thread arenas (up to eight per core), each at its
//!   high-water mark; two arenas keep it near what is in use, and trimming after the
//!   demo load gives its peak back to the system.
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
