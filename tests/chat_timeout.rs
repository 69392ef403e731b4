//! `PKG_AGENT_HTTP_TIMEOUT_MS` reaches the socket the way the real webclient
//! 2.x honours it.
//!
//! On a board every read timed out after webclient's own 6 s default:
//! `webclient_set_timeout` was called before `webclient_post` had connected
//! (it changes nothing then), and the real function turns its argument into
//! `rt_tick_from_millisecond(ms) / 1000` seconds, so on a 100 Hz tick the
//! value must be scaled. A timeout while waiting for the response head is
//! now reported as a timeout.

use rtt_agent::net::transport::{socket_timeout_seconds, webclient_timeout_arg};
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent_testkit::chat_call::chat_json;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::time::{Duration, Instant};

/// RT-Thread 5.3 `src/clock.c` `rt_tick_from_millisecond`, then webclient
/// 2.3.0 `src/webclient.c` `webclient_set_timeout`'s `/ 1000`: the seconds
/// the socket gets for `ms` on a `hz` tick.
// The kernel's formula as written in C, not div_ceil.
#[allow(clippy::manual_div_ceil)]
fn real_socket_seconds(ms: i32, hz: u32) -> u32 {
    let ms = ms as u32;
    let ticks = if hz == 1000 {
        ms
    } else {
        hz * (ms / 1000) + (hz * (ms % 1000) + 999) / 1000
    };
    ticks / 1000
}

#[test]
fn the_real_conversion_lands_on_the_wanted_seconds() {
    // The quirk itself: 30000 ms on a 100 Hz board is 3 s.
    assert_eq!(real_socket_seconds(30000, 100), 3);
    assert_eq!(real_socket_seconds(30000, 1000), 30);
    for hz in [10, 50, 100, 250, 500, 1000, 1024, 2000] {
        for seconds in (1..=700).chain([1800, 3600]) {
            let arg = webclient_timeout_arg(seconds, hz);
            assert!(arg > 0, "{hz} Hz, {seconds} s: {arg}");
            assert_eq!(
                real_socket_seconds(arg, hz),
                seconds,
                "{hz} Hz: argument {arg} for {seconds} s"
            );
        }
    }
}

#[test]
fn timeouts_round_up_to_whole_seconds_never_zero() {
    // lwIP reads a zero timeval as "no timeout at all".
    assert_eq!(socket_timeout_seconds(0), 1);
    assert_eq!(socket_timeout_seconds(1), 1);
    assert_eq!(socket_timeout_seconds(1000), 1);
    assert_eq!(socket_timeout_seconds(1500), 2);
    assert_eq!(socket_timeout_seconds(15000), 15);
    assert_eq!(socket_timeout_seconds(u32::MAX), 3600);
}

/// One process-wide configuration: the two network cases run one after the
/// other.
#[test]
fn first_byte_wait_follows_the_configured_timeout() {
    let _serial = rtt_agent_testkit::agent::lock();
    // Slower than webclient's 6 s default, faster than the 9 s configured:
    // answered. (With the timeout set before connecting, the 6 s default
    // applied and this failed.)
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["late ", "but fine"]).first_byte_after(Duration::from_secs(7))
    ])
    .unwrap();
    configure(&server, 9000);
    let answer = chat_json(r#"[{"role":"user","content":"hi"}]"#, None);
    assert_eq!(answer.map(|a| a.content), Ok("late but fine".to_string()));

    // Nothing within the 2 s configured: a timeout, said so, after about 2 s.
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["too late"]).first_byte_after(Duration::from_secs(5))
    ])
    .unwrap();
    configure(&server, 2000);
    let started = Instant::now();
    let err = chat_json(r#"[{"role":"user","content":"hi"}]"#, None).unwrap_err();
    let took = started.elapsed();
    assert!(err.contains("timeout"), "{err}");
    assert!(err.contains("within 2 s"), "{err}");
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_millis(4500),
        "took {took:?}"
    );
    set_overrides(Overrides::default());
}

fn configure(server: &LlmServer, timeout_ms: usize) {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe { agent_config_set(c"sk-timeout".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        timeout_ms: Some(timeout_ms),
        retries: Some(0),
        retry_base_ms: Some(10),
        ..Overrides::default()
    });
}
