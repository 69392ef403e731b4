//! The agent's kept files (the state file, the notes, the schedule) on a
//! file system without a flush operation: RT-Thread's DFS v1 answers
//! `fsync()` there (ramfs, tmpfs, NFS) with -ENOSYS, errno untouched. The
//! glue's `agent_glue_state_write` took that for a failed write, so on such
//! a board `agent_schedule add` said "the schedule file could not be
//! written" and nothing was kept (found by issue 37's load run on lm3s,
//! whose schedule lives on ramfs: `tests/qemu/run.sh --board lm3s --soak`).
//! A flush that really fails must still fail the write.
//!
//! This test binary defines `fsync` itself: the executable's own symbol
//! takes the place of libc's for the glue linked into it, so the glue sees
//! what the board's file system answers.
#![cfg(all(target_os = "linux", feature = "schedule"))]

use rtt_agent::ffi::schedule::agent_schedule;
use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};

/// Linux's ENOSYS and EIO (the host's glue is built against them).
const ENOSYS: c_int = 38;
const EIO: c_int = 5;

/// What the `fsync` below answers.
static FSYNC_ANSWER: AtomicI32 = AtomicI32::new(0);

/// `fsync` as the board's file system answers it (see the module docs).
#[no_mangle]
pub extern "C" fn fsync(_fd: c_int) -> c_int {
    FSYNC_ANSWER.load(Ordering::SeqCst)
}

#[test]
fn a_file_system_without_flush_keeps_the_schedule_and_a_failed_flush_still_fails() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("state-file-no-flush");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("agent_sched.txt");
    let _ = std::fs::remove_file(&file);
    // SAFETY: set before anything reads it; this binary's only test.
    unsafe { std::env::set_var("RTT_AGENT_SCHEDULE_FILE", &file) };

    // DFS v1 on ramfs: -ENOSYS, nothing to flush. The entry is kept.
    FSYNC_ANSWER.store(-ENOSYS, Ordering::SeqCst);
    let (rc, out) = msh(&["add", "every", "1h", "\"what is 5+300000?\""]);
    assert_eq!((rc, out.as_str()), (0, "scheduled #1\n"));
    let kept = std::fs::read_to_string(&file).expect("the schedule file is written");
    assert!(kept.contains("what is 5+300000?"), "{kept:?}");
    assert!(
        !dir.join("agent_sched.txt.tmp").exists(),
        "the temporary file is renamed over the file"
    );

    // A flush that fails: the command says so, the file keeps entry #1.
    FSYNC_ANSWER.store(-EIO, Ordering::SeqCst);
    let (rc, out) = msh(&["add", "every", "2h", "\"second\""]);
    assert_eq!(rc, -1, "{out}");
    assert!(
        out.contains("the schedule file could not be written"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        kept,
        "the old file is kept"
    );
    assert!(
        !dir.join("agent_sched.txt.tmp").exists(),
        "the temporary file is removed"
    );

    // And a file system that flushes: deleting works as before.
    FSYNC_ANSWER.store(0, Ordering::SeqCst);
    let (rc, out) = msh(&["del", "1"]);
    assert_eq!((rc, out.as_str()), (0, "deleted #1\n"));
    // SAFETY: as above.
    unsafe { std::env::remove_var("RTT_AGENT_SCHEDULE_FILE") };
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Run the `agent_schedule` command with `args`: its result and output.
fn msh(args: &[&str]) -> (i32, String) {
    rtt_agent_testkit::shell::msh_argv(agent_schedule, "agent_schedule", args)
}
