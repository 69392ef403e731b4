//! The console as a board has it, and the CLI channel on it.
//!
//! The host port's console follows RT-Thread 5.3: `finsh_set_device` returns
//! at once for the device the shell already has (`components/finsh/shell.c`),
//! the shell sleeps until its own receive indicator wakes it, and with
//! `RT_USING_POSIX_STDIO` the shell's `read()` sleeps on the serial driver's
//! indicator instead (`components/drivers/serial/dev_serial.c`). On a board
//! the CLI channel used to leave its own indicator on the console after
//! Ctrl-D, and the shell never woke again; these tests pin both halves.
//!
//! One test function: the console and the agent are process-wide.

use rtt_agent::channels::cli::agent_cli_ops;
use rtt_agent::host::{console, heap, shell, thread};
use rtt_agent::rtt::{board, rt_device_t, rt_err_t, rt_size_t};
use rtt_agent::runtime::agent_loop::{self, cleanup_agent_entry, main_loop_entry};
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent_testkit::llm_server::{LlmServer, ScriptedResponse};
use std::ffi::{c_char, c_int, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn uart() -> rt_device_t {
    // SAFETY: the board's console name is a static C string.
    unsafe { console::rt_device_find(board().console_device) }
}

/// finsh_set_device with a NUL-terminated name.
fn set_shell_device(name: &core::ffi::CStr) {
    // SAFETY: `name` is NUL-terminated and outlives the call.
    unsafe { shell::finsh_set_device(name.as_ptr()) }
}

/// What the console printed, gathered until `pattern` shows up; and
/// everything it printed since the screen was made.
struct Screen(String, String);

impl Screen {
    fn wait_for(&mut self, pattern: &str, timeout: Duration) {
        let until = Instant::now() + timeout;
        while !self.0.contains(pattern) {
            assert!(
                Instant::now() < until,
                "timed out waiting for {pattern:?}; the console showed:\n{}",
                self.0
            );
            std::thread::sleep(Duration::from_millis(5));
            let more = console::take_captured();
            self.0.push_str(&more);
            self.1.push_str(&more);
        }
        // Keep what came after the match for the next wait.
        let at = self.0.find(pattern).unwrap_or(0) + pattern.len();
        self.0.drain(..at);
    }
}

/// Stands in for the serial driver's `serial_fops_rx_ind`, which the POSIX
/// stdio layer installs and the shell's `read()` sleeps on.
static POSIX_WAKES: AtomicUsize = AtomicUsize::new(0);
unsafe extern "C" fn posix_stdio_rx_ind(_dev: rt_device_t, _size: rt_size_t) -> rt_err_t {
    POSIX_WAKES.fetch_add(1, Ordering::SeqCst);
    0
}

#[test]
fn console_and_cli_channel() {
    let _serial = rtt_agent_testkit::agent::lock();
    console::rt_host_console_capture(1);
    finsh_set_device_same_device_is_a_no_op();
    ulog_line_is_cut_at_line_buf_size();
    long_log_texts_come_in_whole_lines();
    kprintf_loses_the_last_character_of_a_full_buffer();
    console_text_comes_out_whole();
    let server = LlmServer::with_model(rtt_agent_testkit::arith_model::respond).unwrap();
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe { agent_config_set(c"sk-console".as_ptr(), c"arith".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        retry_base_ms: Some(10),
        timeout_ms: Some(3000),
        ..Overrides::default()
    });
    agent_loop::set_channel(std::ptr::addr_of!(agent_cli_ops));
    let mut screen = Screen(String::new(), String::new());
    cli_ctrl_d_gives_the_shell_its_indicator_back(&mut screen);
    cli_ctrl_d_restores_the_posix_stdio_indicator(&mut screen);
    cleanup_during_the_chat_restores_the_indicator(&mut screen);
    cleanup_log_counts_the_freed_loop_thread(&mut screen);
    an_error_after_streamed_text_is_shown(&mut screen);
    a_cut_answer_shows_its_note(&mut screen);
    an_injected_message_is_answered_between_questions(&mut screen);
    main_loop_entry_after_ctrl_d_reopens_the_chat(&mut screen);
    set_overrides(Overrides::default());
    console::rt_host_console_capture(0);
}

/// shell.c: `if (dev == shell->device) return;`, so an indicator someone
/// else put on the shell's device stays.
fn finsh_set_device_same_device_is_a_no_op() {
    // SAFETY: the board's console name is a static C string.
    let console_name = unsafe { core::ffi::CStr::from_ptr(board().console_device) };
    set_shell_device(console_name);
    assert!(console::rx_is(shell::finsh_rx_ind));
    console::rt_device_set_rx_indicate(uart(), Some(posix_stdio_rx_ind));
    set_shell_device(console_name);
    assert!(
        console::rx_is(posix_stdio_rx_ind),
        "finsh_set_device put its indicator back on the device it already had"
    );
    // An unknown device: a message, nothing changed.
    set_shell_device(c"nosuchdev");
    assert!(console::rx_is(posix_stdio_rx_ind));
    assert!(console::take_captured().contains("finsh: can not find device: nosuchdev"));
    console::rt_device_set_rx_indicate(uart(), Some(shell::finsh_rx_ind));
}

extern "C" {
    fn ulog_output(level: u32, tag: *const c_char, newline: c_int, format: *const c_char, ...);
}

/// The host rtconfig.h's ULOG_LINE_BUF_SIZE.
const ULOG_LINE: usize = 256;

/// ulog.c: head, text and newline share one ULOG_LINE_BUF_SIZE buffer
/// (NUL included); the rest of a longer line is lost.
fn ulog_line_is_cut_at_line_buf_size() {
    let text = CString::new("x".repeat(400)).unwrap();
    // SAFETY: a "%s" format with one NUL-terminated argument.
    unsafe { ulog_output(6, c"agent".as_ptr(), 1, c"%s".as_ptr(), text.as_ptr()) };
    let out = console::take_captured();
    assert_eq!(out.len(), ULOG_LINE - 1, "{out:?}");
    assert!(out.starts_with("I/agent: xxx") && out.ends_with("x\n"));
}

/// The host rtconfig.h's RT_CONSOLEBUF_SIZE.
const CONSOLEBUF: usize = 128;

extern "C" {
    fn rt_kprintf(format: *const c_char, ...) -> c_int;
}

/// kservice.c (5.3): output of RT_CONSOLEBUF_SIZE - 1 characters or more
/// keeps RT_CONSOLEBUF_SIZE - 2 of them and sends the NUL as the last byte.
fn kprintf_loses_the_last_character_of_a_full_buffer() {
    for len in [CONSOLEBUF - 2, CONSOLEBUF - 1, CONSOLEBUF + 40] {
        let text = CString::new("y".repeat(len)).unwrap();
        // SAFETY: a "%s" format with one NUL-terminated argument.
        let n = unsafe { rt_kprintf(c"%s".as_ptr(), text.as_ptr()) };
        let out = console::take_captured();
        if len <= CONSOLEBUF - 2 {
            assert_eq!((n as usize, out.as_str()), (len, &*"y".repeat(len)));
        } else {
            let want = "y".repeat(CONSOLEBUF - 2) + "\0";
            assert_eq!((n as usize, out.as_str()), (CONSOLEBUF - 1, want.as_str()));
        }
    }
}

/// The library's console output (the CLI's streamed answers) goes in
/// pieces rt_kprintf keeps whole: nothing lost, no NUL sent.
fn console_text_comes_out_whole() {
    let text: String = (0..700)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    rtt_agent::rtt::log::console_print(text.as_bytes());
    assert_eq!(console::take_captured(), text);
}

/// The library's own log lines fit that buffer: a long text (a tool call's
/// arguments) comes out as several whole lines, nothing cut, split only
/// between characters.
fn long_log_texts_come_in_whole_lines() {
    let mut text = String::from("[tool_call] ");
    for i in 0..120 {
        text.push_str(&format!("{{\"k{i}\": \"v\u{e9}\"}}"));
    }
    rtt_agent::rtt::log::log_parts(rtt_agent::rtt::log::Level::Info, &[text.as_bytes()]);
    let out = console::take_captured();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 1, "{out:?}");
    let mut joined = String::new();
    for line in &lines {
        assert!(line.len() < ULOG_LINE - 1, "a line was cut: {line:?}");
        joined.push_str(
            line.strip_prefix("I/agent: ")
                .expect("every piece is a line"),
        );
    }
    assert_eq!(joined, text);
}

fn start_chat(screen: &mut Screen) {
    assert_eq!(main_loop_entry(), 0);
    screen.wait_for("you> ", Duration::from_secs(5));
    assert!(!console::rx_is(shell::finsh_rx_ind) && !console::rx_is(posix_stdio_rx_ind));
    console::input(b"what is (2+3)*4?\r");
    screen.wait_for("The result is 20.", Duration::from_secs(10));
    screen.wait_for("you> ", Duration::from_secs(5));
}

/// Without POSIX stdio: after Ctrl-D the shell's own indicator is back and
/// the shell reads what is typed next.
fn cli_ctrl_d_gives_the_shell_its_indicator_back(screen: &mut Screen) {
    start_chat(screen);
    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    wait_until(|| console::rx_is(shell::finsh_rx_ind));
    console::input(b"c");
    assert_eq!(
        shell::finsh_getchar(Some(Duration::from_secs(2))),
        Some(b'c'),
        "the shell did not wake up after the chat"
    );
    assert_eq!(cleanup_agent_entry(), 0);
    assert!(console::rx_is(shell::finsh_rx_ind));
}

/// With POSIX stdio the shell sleeps on the serial driver's indicator: that
/// one is put back, and called once so a sleeping reader looks again.
fn cli_ctrl_d_restores_the_posix_stdio_indicator(screen: &mut Screen) {
    console::rt_device_set_rx_indicate(uart(), Some(posix_stdio_rx_ind));
    start_chat(screen);
    let before = POSIX_WAKES.load(Ordering::SeqCst);
    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    wait_until(|| console::rx_is(posix_stdio_rx_ind));
    wait_until(|| POSIX_WAKES.load(Ordering::SeqCst) > before);
    console::input(b"x");
    assert!(POSIX_WAKES.load(Ordering::SeqCst) >= before + 2);
    assert_eq!(cleanup_agent_entry(), 0);
    assert!(console::rx_is(posix_stdio_rx_ind));
    drain_input();
    console::rt_device_set_rx_indicate(uart(), Some(shell::finsh_rx_ind));
}

/// `cleanup_agent_entry` while the chat holds the console.
fn cleanup_during_the_chat_restores_the_indicator(screen: &mut Screen) {
    start_chat(screen);
    assert_eq!(cleanup_agent_entry(), 0);
    assert!(console::rx_is(shell::finsh_rx_ind));
    console::input(b"z");
    assert_eq!(
        shell::finsh_getchar(Some(Duration::from_secs(2))),
        Some(b'z')
    );
}

/// `[mem] cleanup done: used N` is logged once the loop thread's stack is
/// back on the heap (on a board the idle thread frees it after the thread
/// ended), so N is the figure `free` shows right after.
fn cleanup_log_counts_the_freed_loop_thread(screen: &mut Screen) {
    assert!(thread::settle(Duration::from_secs(10)));
    start_chat(screen);
    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    assert_eq!(cleanup_agent_entry(), 0);
    // The test's own strings stay out of the figures.
    heap::exclude_this_thread(true);
    let log = console::take_captured();
    let logged: usize = log
        .split("[mem] cleanup done: used ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cleanup line in {log:?}"));
    assert!(thread::settle(Duration::from_secs(10)));
    let used = heap::used();
    heap::exclude_this_thread(false);
    assert_eq!(
        logged, used,
        "the cleanup line was logged before the loop thread was freed"
    );
    screen.0.clear();
}

/// A request that fails after part of the answer was printed as it
/// streamed (a cut stream is not retried then): the console shows the part
/// and then what failed, not the part alone.
fn an_error_after_streamed_text_is_shown(screen: &mut Screen) {
    let answer =
        ScriptedResponse::text(&["The answer starts here, ", "and it goes on ", "and on."]);
    let cut = answer.wire_body().len() - 30;
    let _server = ask_in_a_new_chat(screen, answer.cut_after(cut));
    screen.wait_for("The answer starts here, ", Duration::from_secs(10));
    // The log line about it starts a line of its own, not after the text.
    screen.wait_for("\nE/agent: chat failed", Duration::from_secs(10));
    screen.wait_for(
        "error: the request to the model failed: the response stream was cut off",
        Duration::from_secs(10),
    );
    leave_the_chat(screen);
}

/// Start a chat against a server that answers `answer`, and ask.
fn ask_in_a_new_chat(screen: &mut Screen, answer: ScriptedResponse) -> LlmServer {
    let server = LlmServer::start(vec![answer]).unwrap();
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"sk-console".as_ptr(), c"arith".as_ptr(), url.as_ptr()) };
    assert_eq!(main_loop_entry(), 0);
    screen.wait_for("you> ", Duration::from_secs(5));
    console::input(b"tell me\r");
    server
}

/// The prompt back after the reply, then Ctrl-D and cleanup.
fn leave_the_chat(screen: &mut Screen) {
    screen.wait_for("you> ", Duration::from_secs(5));
    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    assert_eq!(cleanup_agent_entry(), 0);
    screen.0.clear();
}

/// An answer cut at PKG_AGENT_MAX_CONTENT_LEN streams up to the cap and
/// then the note that says so (the reply holds the same), on the console.
fn a_cut_answer_shows_its_note(screen: &mut Screen) {
    set_overrides(Overrides {
        max_content: Some(24),
        retry_base_ms: Some(10),
        timeout_ms: Some(3000),
        ..Overrides::default()
    });
    let answer = ScriptedResponse::text(&["0123456789", "abcdefghij", "KLMNOPQRST", "uvwxyz"]);
    let _server = ask_in_a_new_chat(screen, answer);
    screen.wait_for(
        "0123456789abcdefghijKLMN\n[answer cut: longer than PKG_AGENT_MAX_CONTENT_LEN]",
        Duration::from_secs(10),
    );
    leave_the_chat(screen);
}

/// A message injected while the chat waits for a line (an MQTT alert
/// through `agent_inject_text`): its answer shows on the console, the
/// prompt and the half-typed line come back, and the next question gets
/// its own answer before the prompt, not the injected one's.
fn an_injected_message_is_answered_between_questions(screen: &mut Screen) {
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["Sensor reading noted."]),
        ScriptedResponse::text(&["Here is your own answer."]),
    ])
    .unwrap();
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"sk-console".as_ptr(), c"arith".as_ptr(), url.as_ptr()) };
    assert_eq!(main_loop_entry(), 0);
    screen.wait_for("you> ", Duration::from_secs(5));
    console::input(b"my q");
    screen.wait_for("my q", Duration::from_secs(5));
    // SAFETY: a NUL-terminated literal, copied by the call.
    let injected = unsafe { rtt_agent::ffi::runtime::agent_inject_text(c"temp=42".as_ptr()) };
    assert_eq!(injected, 0, "agent_inject_text");
    screen.wait_for("Sensor reading noted.", Duration::from_secs(10));
    screen.wait_for("you> my q", Duration::from_secs(5));
    console::input(b"uestion?\r");
    screen.wait_for("Here is your own answer.", Duration::from_secs(10));
    // The prompt comes after this question's answer, not before it.
    screen.wait_for("you> ", Duration::from_secs(5));
    let requests = server.requests();
    let last_user = |i: usize| rtt_agent_testkit::agent::last_user_message(&requests[i]);
    assert_eq!(last_user(0).as_deref(), Some("temp=42"));
    assert_eq!(last_user(1).as_deref(), Some("my question?"));
    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    assert_eq!(cleanup_agent_entry(), 0);
    screen.0.clear();
}

/// Ctrl-D, then `main_loop_entry` on the running agent: the chat opens
/// again with the conversation kept (the next request carries the first
/// question and its answer), and the shell answers after the second
/// Ctrl-D. A chat stopped by `agent_cli_stop` (a module that reads the
/// replies itself) is not opened again: `main_loop_entry` says the loop
/// runs, and the console stays the shell's.
fn main_loop_entry_after_ctrl_d_reopens_the_chat(screen: &mut Screen) {
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["First answer."]),
        ScriptedResponse::text(&["Second answer."]),
    ])
    .unwrap();
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"sk-console".as_ptr(), c"arith".as_ptr(), url.as_ptr()) };
    assert_eq!(main_loop_entry(), 0);
    screen.wait_for("you> ", Duration::from_secs(5));
    console::input(b"first question\r");
    screen.wait_for("First answer.", Duration::from_secs(10));
    screen.wait_for("you> ", Duration::from_secs(5));
    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    wait_until(|| console::rx_is(shell::finsh_rx_ind));

    let mark = screen.1.len();
    assert_eq!(
        main_loop_entry(),
        0,
        "the C package's return for a second start"
    );
    screen.wait_for("Agent chat: type a message", Duration::from_secs(5));
    screen.wait_for("you> ", Duration::from_secs(5));
    assert!(
        !console::rx_is(shell::finsh_rx_ind),
        "the chat has the console"
    );
    console::input(b"second question\r");
    screen.wait_for("Second answer.", Duration::from_secs(10));
    screen.wait_for("you> ", Duration::from_secs(5));
    assert!(
        !screen.1[mark..].contains("already running"),
        "{}",
        &screen.1[mark..]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = rtt_agent_testkit::agent::messages_of(&requests[1]);
    let said: Vec<(&str, &str)> = second
        .iter()
        .map(|m| (m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        &said[1..],
        [
            ("user", "first question"),
            ("assistant", "First answer."),
            ("user", "second question")
        ],
        "the conversation after the system prompt"
    );

    console::input(b"\x04");
    screen.wait_for("leaving the agent chat", Duration::from_secs(5));
    wait_until(|| console::rx_is(shell::finsh_rx_ind));
    console::input(b"s");
    assert_eq!(
        shell::finsh_getchar(Some(Duration::from_secs(2))),
        Some(b's'),
        "the shell did not wake up after the reopened chat"
    );

    rtt_agent::channels::cli::agent_cli_stop();
    let mark = screen.1.len();
    assert_eq!(main_loop_entry(), 0);
    screen.wait_for("the agent loop is already running", Duration::from_secs(5));
    assert!(!screen.1[mark..].contains("Agent chat:"));
    assert!(console::rx_is(shell::finsh_rx_ind));
    assert_eq!(cleanup_agent_entry(), 0);
    screen.0.clear();
}

fn wait_until(cond: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < until, "condition not met in 5 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn drain_input() {
    while console::pending_input() > 0 {
        let mut b = [0u8; 64];
        // SAFETY: the console device and a writable local buffer of that size.
        unsafe { console::rt_device_read(uart(), -1, b.as_mut_ptr() as *mut _, b.len()) };
    }
}
