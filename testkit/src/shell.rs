//! MSH commands in a test, as a user types them at the shell: the result
//! and what the command printed (the console captured around the call).

use rtt_agent::host::console;
use std::ffi::{c_char, c_int, CString};

/// An MSH command as finsh calls it: `int cmd(int argc, char **argv)`.
pub type Command = unsafe extern "C" fn(c_int, *mut *mut c_char) -> c_int;

/// Run `line` as the shell does (`rtt_agent::host::shell::exec`: split at
/// spaces, the first word names the command); panics when no command of
/// that name exists.
pub fn msh(line: &str) -> (i32, String) {
    captured(|| rtt_agent::host::shell::exec(line).expect("the command exists"))
}

/// Call `cmd` with `name` and `args` as its argv: a word may hold spaces,
/// as a quoted word does at a board's shell.
pub fn msh_argv(cmd: Command, name: &str, args: &[&str]) -> (i32, String) {
    let owned: Vec<CString> = std::iter::once(name)
        .chain(args.iter().copied())
        .map(|a| CString::new(a).expect("no NUL in a word"))
        .collect();
    let mut argv: Vec<*mut c_char> = owned.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    argv.push(std::ptr::null_mut());
    // SAFETY: argc NUL-terminated strings that outlive the call, then a
    // NULL, as finsh passes them.
    captured(|| unsafe { cmd(owned.len() as c_int, argv.as_mut_ptr()) })
}

fn captured(run: impl FnOnce() -> c_int) -> (i32, String) {
    console::rt_host_console_capture(1);
    let rc = run();
    let out = console::take_captured();
    console::rt_host_console_capture(0);
    (rc, out)
}
