//! The host simulator's command table: `MSH_CMD_EXPORT` in C registers here
//! (through a constructor, see `host/include/finsh.h`), as finsh collects
//! its `FSymTab` section on a board.

use core::ffi::{c_char, c_int, c_void, CStr};
use std::ffi::CString;
use std::sync::Mutex;

#[derive(Clone, Copy)]
pub struct Command {
    pub name: &'static CStr,
    pub desc: &'static CStr,
    func: unsafe extern "C" fn(),
}

// SAFETY: names and descriptions are string literals; functions are code.
unsafe impl Send for Command {}

const MAX_COMMANDS: usize = 128;
static COMMANDS: Mutex<([Option<Command>; MAX_COMMANDS], usize)> =
    Mutex::new(([None; MAX_COMMANDS], 0));

/// Register a shell command (what `MSH_CMD_EXPORT` expands to on the host);
/// a second registration of a name replaces the first.
///
/// # Safety
/// `name` is NULL or, like `desc` when not NULL, a NUL-terminated string that
/// lives and stays unchanged for the rest of the process (a string literal);
/// `func` is a finsh command (`int cmd(int argc, char **argv)`, or fewer
/// parameters).
#[no_mangle]
pub unsafe extern "C" fn rt_host_msh_register(
    name: *const c_char,
    desc: *const c_char,
    func: Option<unsafe extern "C" fn()>,
) {
    let (Some(func), false) = (func, name.is_null()) else {
        return;
    };
    // SAFETY: `name` is non-NULL, NUL-terminated and lives for ever (our
    // contract: MSH_CMD_EXPORT passes string literals).
    let name: &'static CStr = unsafe { CStr::from_ptr(name) };
    let desc: &'static CStr = if desc.is_null() {
        c""
    } else {
        // SAFETY: `desc` is non-NULL, NUL-terminated and lives for ever (our
        // contract).
        unsafe { CStr::from_ptr(desc) }
    };
    let mut table = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
    let (slots, count) = &mut *table;
    if let Some(existing) = slots[..*count]
        .iter_mut()
        .flatten()
        .find(|c| c.name == name)
    {
        *existing = Command { name, desc, func };
    } else if *count < MAX_COMMANDS {
        slots[*count] = Some(Command { name, desc, func });
        *count += 1;
    }
}

/// Every registered command, in registration order.
pub fn commands() -> Vec<Command> {
    let table = COMMANDS.lock().unwrap_or_else(|e| e.into_inner());
    table.0[..table.1].iter().flatten().copied().collect()
}

/// Split a command line into words; double quotes group words.
pub fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Run a command line; `None` when the command does not exist.
pub fn exec(line: &str) -> Option<c_int> {
    let words = split_words(line);
    let first = words.first()?;
    let cmd = commands()
        .into_iter()
        .find(|c| c.name.to_bytes() == first.as_bytes())?;
    let args: Vec<CString> = words
        .iter()
        .map(|w| CString::new(w.as_str()).unwrap_or_default())
        .collect();
    let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    argv.push(core::ptr::null_mut());
    // SAFETY: both are fn pointers of the same size; finsh calls every command
    // as int cmd(int argc, char **argv), and commands declared with fewer
    // parameters ignore the extra ones under the C calling conventions this
    // port runs on (rt_host_msh_register's contract).
    let func: unsafe extern "C" fn(c_int, *mut *mut c_char) -> c_int =
        unsafe { core::mem::transmute(cmd.func) };
    // SAFETY: `argv` holds `args.len()` NUL-terminated strings (kept alive by
    // `args` during the call) and a NULL terminator, as finsh passes them.
    Some(unsafe { func(args.len() as c_int, argv.as_mut_ptr()) })
}

/// Run a command line (see [`exec`]); -1 when `line` is NULL or names no
/// command.
///
/// # Safety
/// `line` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn rt_host_msh_exec(line: *const c_char) -> c_int {
    if line.is_null() {
        return -1;
    }
    // SAFETY: `line` is non-NULL and NUL-terminated (our contract).
    let line = unsafe { CStr::from_ptr(line) }
        .to_string_lossy()
        .into_owned();
    exec(&line).unwrap_or(-1)
}

// ---- the shell's side of the console, as finsh has it
//
// RT-Thread 5.3 `components/finsh/shell.c` (without RT_USING_POSIX_STDIO):
// the shell thread reads its device one byte at a time and sleeps on its
// own semaphore, which only its own receive indicator (`finsh_rx_ind`)
// releases. `finsh_set_device` returns at once when the device is already
// the shell's, so it never puts back an indicator someone else installed.

use super::console;
use crate::rtt::{rt_device_t, rt_eok, rt_err_t, rt_size_t};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Condvar;
use std::time::{Duration, Instant};

/// `shell->device`, as an address (0: none yet).
static SHELL_DEVICE: AtomicUsize = AtomicUsize::new(0);
/// `shell->rx_sem`: a counting semaphore.
static SHELL_RX: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// finsh's receive indicator: wakes the shell thread. Safe to call with any
/// arguments (it ignores them); it coerces to the device's `rx_indicate` type.
pub extern "C" fn finsh_rx_ind(_dev: rt_device_t, _size: rt_size_t) -> rt_err_t {
    let (count, cond) = &SHELL_RX;
    *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    cond.notify_one();
    rt_eok()
}

/// `finsh_set_device`: what shell.c does, the same-device early return
/// included.
///
/// # Safety
/// `device_name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn finsh_set_device(device_name: *const c_char) {
    // SAFETY: `device_name` is NULL or NUL-terminated (our contract).
    let dev = unsafe { console::rt_device_find(device_name) };
    if dev.is_null() {
        let name = if device_name.is_null() {
            String::new()
        } else {
            // SAFETY: `device_name` is non-NULL and NUL-terminated (our contract).
            unsafe { CStr::from_ptr(device_name) }
                .to_string_lossy()
                .into_owned()
        };
        console::write(format!("finsh: can not find device: {name}\n").as_bytes());
        return;
    }
    let old = SHELL_DEVICE.load(Ordering::Acquire) as rt_device_t;
    if dev == old {
        return;
    }
    if console::rt_device_open(dev, 0x003 | 0x100 | 0x040) == rt_eok() {
        if !old.is_null() {
            console::rt_device_close(old);
            console::rt_device_set_rx_indicate(old, None);
        }
        SHELL_DEVICE.store(dev as usize, Ordering::Release);
        console::rt_device_set_rx_indicate(dev, Some(finsh_rx_ind));
    }
}

/// `finsh_getchar`: the next byte for the shell, or `None` when the shell
/// has no device or `timeout` passed (the real one waits for ever; the
/// simulator and tests need a way out).
pub fn finsh_getchar(timeout: Option<Duration>) -> Option<u8> {
    let until = timeout.map(|t| Instant::now() + t);
    loop {
        let dev = SHELL_DEVICE.load(Ordering::Acquire) as rt_device_t;
        if dev.is_null() {
            return None;
        }
        let mut b = 0u8;
        // SAFETY: one writable byte, a local.
        let n = unsafe { console::rt_device_read(dev, -1, &mut b as *mut u8 as *mut c_void, 1) };
        if n == 1 {
            return Some(b);
        }
        // rt_sem_take(&shell->rx_sem, RT_WAITING_FOREVER)
        let (count, cond) = &SHELL_RX;
        let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
        while *n == 0 {
            match until {
                None => n = cond.wait(n).unwrap_or_else(|e| e.into_inner()),
                Some(u) => {
                    let left = u.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    n = cond
                        .wait_timeout(n, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
        *n -= 1;
    }
}
