//! The agent's lifecycle and the heap: enter, talk, clean up, again and
//! again, and `used` comes back exactly. One test function in a process of
//! its own: the test harness allocates too (it formats each finished test's
//! line while others run), so nothing else may run beside these checks.

use rtt_agent::host::console;
use rtt_agent::runtime::agent_loop::{cleanup_agent_entry, main_loop_entry};
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::time::{Duration, Instant};

#[test]
fn lifecycle_and_heap() {
    let _serial = lock();
    lifecycle_cycles_return_the_heap_to_its_baseline();
    cleanup_during_a_stalled_stream_and_odd_calls();
    init_and_cleanup_without_a_loop_thread();
}

/// Run `f` on a thread of its own; fail if it takes longer than `limit`.
fn within(limit: Duration, what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    assert!(
        rx.recv_timeout(limit).is_ok(),
        "{what} did not return within {limit:?}"
    );
    worker.join().unwrap();
}

/// `init_agent` alone (no AgentLoop thread), with either channel, then
/// `cleanup_agent` or `cleanup_agent_entry`: both stop it, free everything
/// and return at once, however often.
fn init_and_cleanup_without_a_loop_thread() {
    use rtt_agent::channels::cli::agent_cli_ops;
    use rtt_agent::runtime::agent_loop::{self, cleanup_agent, init_agent, is_running};
    // The console's capture buffer is on the heap too: the heap rounds run
    // without it, the last round checks the log. One round first, outside
    // the figures: the test's own helper thread allocates 48 bytes of std's
    // lazily made state the first time (measured).
    agent_loop::set_channel(std::ptr::addr_of!(agent_cli_ops));
    init_agent();
    within(Duration::from_secs(5), "cleanup_agent", cleanup_agent);
    let baseline = settled_used();
    for round in 0..5 {
        if round == 4 {
            console::rt_host_console_capture(1);
        }
        let (ops, name) = if round % 2 == 0 {
            (std::ptr::addr_of!(agent_cli_ops), "CLI")
        } else {
            // The Debug channel (without it, the test kit's own)
            (test_channel(), "Debug")
        };
        agent_loop::set_channel(ops);
        init_agent();
        assert!(is_running(), "init_agent ({name} channel) made no agent");
        init_agent(); // a second one is refused, nothing leaks
        if round < 2 {
            within(Duration::from_secs(5), "cleanup_agent", cleanup_agent);
        } else {
            within(Duration::from_secs(5), "cleanup_agent_entry", || {
                assert_eq!(cleanup_agent_entry(), 0);
            });
        }
        assert!(!is_running());
        cleanup_agent(); // idempotent
        if round == 4 {
            break;
        }
        assert_eq!(
            settled_used(),
            baseline,
            "heap not back after init_agent/cleanup ({name} channel, round {round})"
        );
    }
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        log.contains("init_agent: the agent is already initialised"),
        "{log}"
    );
    assert!(log.contains("[mem] cleanup done"));
}

fn lifecycle_cycles_return_the_heap_to_its_baseline() {
    let server = LlmServer::with_model(rtt_agent_testkit::arith_model::respond).unwrap();
    let guard_server = &server;
    console::rt_host_console_capture(1);
    let cycle = || {
        let agent = Agent::start(guard_server, Overrides::default());
        assert_eq!(agent.ask("what is (2+3)*4?"), "The result is 20.");
        drop(agent);
    };
    cycle(); // first use of lazily created runtime state
    let baseline = settled_used();
    for i in 0..100 {
        cycle();
        assert_eq!(
            settled_used(),
            baseline,
            "heap not back to its baseline after cycle {i}"
        );
    }
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(log.contains("[mem] agent started") && log.contains("[mem] cleanup done"));
}

fn cleanup_during_a_stalled_stream_and_odd_calls() {
    // Without a loop: nothing to do.
    assert_eq!(cleanup_agent_entry(), 0);

    // Twice, so a leak on this path cannot hide in the first run's numbers.
    for _round in 0..2 {
        let server = uncounted_server(|| {
            vec![
                ScriptedResponse::sse(sse_text(&["never", "finished"], Some("stop")))
                    .stall_after(40),
            ]
        });
        let baseline = settled_used();
        let agent = Agent::start(
            &server,
            Overrides {
                timeout_ms: Some(1500),
                ..Overrides::default()
            },
        );
        assert_eq!(main_loop_entry(), 0, "a second start is a no-op");
        let asker = std::thread::spawn(|| send_beside("stall please"));
        assert!(server.wait_for_requests(1, Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        drop(agent); // cleanup_agent_entry while the stream stalls
        let took = t0.elapsed();
        // A reply or why none came (without the Debug channel nobody waited).
        let sent = asker.join().unwrap();
        assert!(!matches!(sent, Ok(None)) || !cfg!(feature = "channel-debug"));
        drop(sent);
        assert!(took < Duration::from_secs(30), "cleanup hung for {took:?}");
        drop(server);
        assert_eq!(settled_used(), baseline);
    }
}
