//! Opt-in: the newest C package's MQTT toolset, unchanged, on our library
//! on the host port (issue 29, "the same on the host").
//!
//! From `UPSTREAM_AGENT_SRC` (the newest files of CXSforHPU/Agent, in a
//! folder outside this repository; never copied in) the test compiles
//! `src/tools/tool_mqtt/*.c` and `src/tool_func.c` against our `include/`
//! plus its `include/tools/tool_mqtt/`, and from `PAHOMQTT_SRC`
//! (RT-Thread-packages/paho-mqtt) `MQTTPacket/src/*.c` and
//! `MQTTClient-RT/paho_mqtt_pipe.c` in pipe mode, all as they are (paho's
//! with zeroed stack variables: see `build`). Host-only
//! help, ours, in `tests/upstream/mqtt/`: `board_config.h` (what a board's
//! rtconfig.h adds with the toolset on), `include/rtdevice.h` and
//! `pipe_host.c` (RT-Thread's named pipe on a Linux pipe), `paho_host.h`
//! (paho's `open("/dev/MQTTn")` sent there), `include/rtdbg.h`. Our
//! `glue/agent_board_config.c` is compiled again with the toolset's options,
//! as a board's build would, and linked ahead of the library. The program
//! `tests/upstream/mqtt/mqtt_host.c` runs the agent with them and is the
//! user of the host's CLI chat: it types into the console and reads the
//! replies there, so the chat is the only reader of the agent's output
//! mailbox, as on a board (the reply to the injected message is the chat's
//! to show; a second reader of the mailbox raced it for that reply).
//!
//! `upstream_mqtt_against_mosquitto` also needs Debian's `mosquitto` and
//! `mosquitto-clients`: the broker runs on 127.0.0.1, the scripted model
//! subscribes, publishes and sets a rule, the test sees the message at the
//! broker and publishes over the rule, and the agent answers on its own.
//! `upstream_mqtt_without_a_broker_url` builds with the URL empty (our
//! default): the model's `mqtt_publish` is answered "not configured".
//!
//! Both are `#[ignore]`d: `tests/run-all` runs them with `--ignored` when
//! the sources (and the broker) are there, and prints NOT RUN otherwise.

use rtt_agent_testkit::agent::{messages_of, offered_tools, Msg};
use rtt_agent_testkit::llm_server::{LlmServer, ScriptedResponse};
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn source_dir(var: &str, must_have: &str) -> PathBuf {
    let dir = PathBuf::from(
        std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set (this test is opt-in)")),
    );
    assert!(
        dir.join(must_have).exists(),
        "{var}={}: no {must_have} there",
        dir.display()
    );
    dir
}

/// The `.c` files of `dir`, sorted.
fn c_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    files
}

fn cjson_include() -> String {
    std::env::var("CJSON_INCLUDE_DIR").unwrap_or_else(|_| {
        ["/usr/include/cjson", "/usr/local/include/cjson"]
            .into_iter()
            .find(|d| Path::new(d).join("cJSON.h").exists())
            .unwrap_or("/usr/include")
            .to_string()
    })
}

/// Build `mqtt_host` with `broker_url` as PKG_AGENT_TOOL_MQTT_BROKER_URL
/// into target/c-tests/upstream-mqtt/<name>/.
fn build(name: &str, broker_url: &str) -> PathBuf {
    let upstream = source_dir("UPSTREAM_AGENT_SRC", "src/tools/tool_mqtt");
    let paho = source_dir("PAHOMQTT_SRC", "MQTTClient-RT/paho_mqtt_pipe.c");
    let out = root().join("target/c-tests/upstream-mqtt").join(name);
    std::fs::create_dir_all(&out).unwrap();
    let shim = root().join("tests/upstream/mqtt");
    let url = format!("-DPKG_AGENT_TOOL_MQTT_BROKER_URL=\"{broker_url}\"");
    // The board's headers: ours, the C package's tool_mqtt folder (ours has
    // none), the host port's RT-Thread, the shims, paho's.
    let includes: Vec<String> = [
        root().join("include"),
        root().join("include/tools"),
        root().join("include/channels"),
        upstream.join("include/tools/tool_mqtt"),
        root().join("host/include"),
        shim.join("include"),
        paho.join("MQTTClient-RT"),
        paho.join("MQTTPacket/src"),
        PathBuf::from(cjson_include()),
    ]
    .iter()
    .map(|d| format!("-I{}", d.display()))
    .collect();
    let config = [
        "-include".to_string(),
        shim.join("board_config.h").display().to_string(),
        url.clone(),
    ];

    // (file, warnings ours to fail on, extra flags)
    let mut units: Vec<(PathBuf, bool, Vec<String>)> = Vec::new();
    for f in c_files(&upstream.join("src/tools/tool_mqtt")) {
        units.push((f, false, vec![]));
    }
    units.push((upstream.join("src/tool_func.c"), false, vec![]));
    for f in c_files(&paho.join("MQTTPacket/src")) {
        units.push((f, false, vec![]));
    }
    // paho_mqtt_pipe.c's MQTT_cycle has MQTTDeserialize_publish write an
    // int through `(int *)&msg.payloadlen`, a size_t: on a 32-bit board the
    // whole length, on a 64-bit host only its low half, the high half left
    // as the stack had it (valgrind: "depends on uninitialised value(s)" in
    // the toolset's mqtt_sub_callback; a payload read as 255 bytes of
    // garbage when the stack is not zero). Zeroed stack variables make the
    // host read what a board reads; the file stays as it is.
    units.push((
        paho.join("MQTTClient-RT/paho_mqtt_pipe.c"),
        false,
        vec![
            "-include".into(),
            shim.join("paho_host.h").display().to_string(),
            "-ftrivial-auto-var-init=zero".into(),
        ],
    ));
    units.push((
        root().join("glue/agent_board_config.c"),
        true,
        vec![format!("-I{}", root().join("glue").display())],
    ));
    units.push((shim.join("pipe_host.c"), true, vec![]));

    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut objects = Vec::new();
    for (i, (src, ours, extra)) in units.iter().enumerate() {
        let obj = out.join(format!(
            "{i:02}_{}.o",
            src.file_stem().unwrap().to_string_lossy()
        ));
        let mut cmd = Command::new(&cc);
        cmd.args(["-std=gnu11", "-g", "-c"]);
        if *ours {
            cmd.args(["-Wall", "-Wextra", "-Werror"]);
        } else {
            // Not ours to tidy, but a call to something our headers do not
            // declare, or a mismatched type, is ours to know about.
            cmd.args([
                "-Werror=implicit-function-declaration",
                "-Werror=incompatible-pointer-types",
                "-Werror=int-conversion",
            ]);
        }
        let o = cmd
            .args(&config)
            .args(&includes)
            .args(extra)
            .arg(src)
            .arg("-o")
            .arg(&obj)
            .output()
            .expect("run cc");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success(),
            "cc failed for {}:\n{err}",
            src.display()
        );
        if !err.trim().is_empty() {
            eprintln!("warnings in {} (not ours):\n{err}", src.display());
        }
        objects.push(obj.display().to_string());
    }

    // The driver, ours, through tests/host-cc (-Wall -Wextra -Werror),
    // linked with the objects ahead of the library: the C package's
    // tool_func.c replaces ours (init_tools, agent_tools_cleanup) and the
    // glue compiled with the toolset's options replaces the library's copy,
    // as on a board, so neither archive member is pulled in.
    let exe = out.join("mqtt_host");
    let status = Command::new(root().join("tests/host-cc"))
        .current_dir(root())
        .args(&config)
        .args(&includes)
        .arg(format!("-I{}", root().join("tests/c").display()))
        .arg(shim.join("mqtt_host.c"))
        .args(&objects)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run tests/host-cc");
    assert!(status.success(), "tests/host-cc failed for mqtt_host");
    exe
}

/// A free TCP port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into()])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Lines a child prints, collected by a thread.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    fn collect(&self, from: impl Read + Send + 'static) -> std::thread::JoinHandle<()> {
        let lines = self.0.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(from).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        })
    }
    fn snapshot(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
    /// Wait (up to `limit`) for a line containing `text` among those from
    /// the `from`-th on.
    fn wait_for(&self, from: usize, text: &str, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if self.snapshot().iter().skip(from).any(|l| l.contains(text)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

/// A child killed when dropped (a failed assertion leaves no broker behind).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// mosquitto on 127.0.0.1:`port`, anonymous, logging every packet to its
/// stderr (unbuffered; its stdout is buffered in a pipe).
fn start_mosquitto(port: u16) -> (Reaped, Lines) {
    let bin = which("mosquitto").expect("mosquitto is not installed (apt-get install mosquitto)");
    let dir = root().join("target/c-tests/upstream-mqtt");
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join(format!("mosquitto-{port}.conf"));
    std::fs::write(
        &conf,
        format!(
            "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n\
             log_dest stderr\nlog_type all\nconnection_messages true\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(bin)
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mosquitto");
    let log = Lines::default();
    log.collect(child.stdout.take().unwrap());
    log.collect(child.stderr.take().unwrap());
    let end = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < end,
            "mosquitto did not listen on {port}:\n{}",
            log.snapshot().join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Reaped(child), log)
}

fn mosquitto_pub(port: u16, topic: &str, message: &str) {
    let bin = which("mosquitto_pub").expect("mosquitto_pub (apt-get install mosquitto-clients)");
    let status = Command::new(bin)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-q",
            "1",
            "-t",
            topic,
            "-m",
            message,
        ])
        .status()
        .expect("run mosquitto_pub");
    assert!(status.success(), "mosquitto_pub {topic} {message}");
}

fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// How the driver runs: as it is, then (when installed) under valgrind with
/// leak checking, as tests/c_tests.rs runs the C tests.
fn runners() -> Vec<Vec<String>> {
    let mut out = vec![vec![]];
    if valgrind_available() {
        out.push(
            [
                "valgrind",
                "-q",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite,indirect",
                "--error-exitcode=99",
            ]
            .map(String::from)
            .to_vec(),
        );
    } else {
        eprintln!("valgrind not installed: skipped the memory check of mqtt_host");
    }
    out
}

/// Run `exe` behind `runner` (180 s at most), calling `on_line` with each
/// line it prints; its whole output and whether it passed.
fn run_driver(
    runner: &[String],
    exe: &Path,
    args: &[&str],
    mut on_line: impl FnMut(&str),
) -> (String, bool) {
    let mut cmd = match runner.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    let mut child = cmd
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mqtt_host");
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(180);
            while !done.load(Ordering::SeqCst) {
                if Instant::now() > end {
                    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let err = Lines::default();
    let err_thread = err.collect(child.stderr.take().unwrap());
    let mut all = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let Ok(line) = line else { break };
        on_line(&line);
        all.push(line);
    }
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    watchdog.join().unwrap();
    err_thread.join().unwrap();
    let text = format!(
        "{}\n-- stderr --\n{}",
        all.join("\n"),
        err.snapshot().join("\n")
    );
    let passed = status.success() && all.iter().any(|l| l.ends_with(" passed, 0 failed"));
    (text, passed)
}

fn last_of<'a>(msgs: &'a [Msg], role: &str) -> &'a str {
    msgs.iter()
        .rev()
        .find(|m| m.role == role)
        .map_or("", |m| m.content.as_str())
}

const MQTT_TOOLS: [&str; 7] = [
    "mqtt_connect",
    "mqtt_disconnect",
    "mqtt_publish",
    "mqtt_subscribe",
    "mqtt_receive",
    "mqtt_rule",
    "mqtt_history",
];

#[test]
#[ignore = "needs UPSTREAM_AGENT_SRC, PAHOMQTT_SRC and mosquitto (tests/run-all runs it when they are there)"]
fn upstream_mqtt_against_mosquitto() {
    assert!(
        which("mosquitto").is_some()
            && which("mosquitto_sub").is_some()
            && which("mosquitto_pub").is_some(),
        "needs mosquitto and mosquitto-clients (apt-get install mosquitto mosquitto-clients)"
    );
    let port = free_port();
    let exe = build("broker", &format!("tcp://127.0.0.1:{port}"));
    let (_broker, broker_log) = start_mosquitto(port);
    for runner in runners() {
        scenario_at_the_broker(&runner, &exe, port, &broker_log);
    }
}

/// One run of the scenario: the model subscribes, publishes and sets a
/// rule; the test publishes under and over it; the agent answers the
/// second on its own; the model disconnects; cleanup.
fn scenario_at_the_broker(runner: &[String], exe: &Path, port: u16, broker_log: &Lines) {
    let log_from = broker_log.snapshot().len();
    // What arrives on t/out, seen by a subscriber of the test's own (it
    // prints the first message and exits: its stdout is flushed then).
    let sub_out = Lines::default();
    let mut sub = Command::new(which("mosquitto_sub").unwrap())
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-q",
            "1",
            "-t",
            "t/out",
        ])
        .args(["-v", "-C", "1", "-W", "200", "-i", "test-observer"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mosquitto_sub");
    let sub_thread = sub_out.collect(sub.stdout.take().unwrap());
    let sub = Reaped(sub);
    assert!(
        broker_log.wait_for(
            log_from,
            "Received SUBSCRIBE from test-observer",
            Duration::from_secs(10)
        ),
        "mosquitto_sub did not subscribe:\n{}",
        broker_log.snapshot().join("\n")
    );

    let call =
        |id: &str, name: &str, args: &str| ScriptedResponse::tool_calls(&[(id, name, &[args])]);
    let server = LlmServer::start(vec![
        call(
            "c1",
            "mqtt_subscribe",
            r#"{"action":"subscribe","topic":"t/in","mode":"filter"}"#,
        ),
        call(
            "c2",
            "mqtt_publish",
            r#"{"topic":"t/out","message":"hello"}"#,
        ),
        call(
            "c3",
            "mqtt_rule",
            r#"{"action":"set","topic":"t/in","field":"temp","op":">","value":30}"#,
        ),
        ScriptedResponse::text(&["Watching t/in."]),
        ScriptedResponse::text(&["Alert: t/in temp is 42, above 30."]),
        call("c4", "mqtt_disconnect", "{}"),
        ScriptedResponse::text(&["Disconnected."]),
    ])
    .unwrap();

    let (output, passed) = run_driver(runner, exe, &["broker", &server.url()], |line| {
        if line == "@@ rule-set" {
            // Under the rule first (kept back), then over it.
            mosquitto_pub(port, "t/in", r#"{"temp":20}"#);
            mosquitto_pub(port, "t/in", r#"{"temp":42}"#);
        }
    });
    eprintln!("{output}");
    assert!(passed, "mqtt_host {runner:?} failed:\n{output}");

    // The broker got "hello" on t/out from the agent's mqtt_publish, and
    // the agent's client left with a DISCONNECT (no last will sent).
    drop(sub);
    sub_thread.join().unwrap();
    assert_eq!(sub_out.snapshot(), ["t/out hello"], "t/out at the broker");
    let lines = broker_log.snapshot()[log_from..].to_vec();
    let log = lines.join("\n");
    for line in [
        "as rt-thread-agent (p2, c1, k60)",
        "Received DISCONNECT from rt-thread-agent",
    ] {
        assert!(log.contains(line), "no {line:?} in the broker log:\n{log}");
    }
    assert!(
        lines.iter().any(
            |l| l.contains("Received PUBLISH from rt-thread-agent (d0, q1, r0, m")
                && l.ends_with(", 't/out', ... (5 bytes))")
        ),
        "no PUBLISH of t/out from the agent in the broker log:\n{log}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 7, "requests to the model");
    // The C package's tool_func.c registered its seven tools and the three
    // built-in ones (ours registers only those three); its numbers, typed
    // "double" as in its add/mul, go out as JSON Schema's "number".
    let offered = offered_tools(&requests[0].body);
    for tool in MQTT_TOOLS.iter().chain(&["add", "mul", "compare"]) {
        assert!(
            offered.iter().any(|(n, _)| n == tool),
            "{tool} not offered: {offered:?}"
        );
    }
    let rule_schema = &offered.iter().find(|(n, _)| n == "mqtt_rule").unwrap().1;
    assert!(
        rule_schema.contains(r#""value":{"type":"number""#),
        "mqtt_rule's parameters: {rule_schema}"
    );
    let tool_result = |i: usize| last_of(&messages_of(&requests[i]), "tool").to_string();
    let sub = tool_result(1);
    assert!(
        sub.contains("subscribe ok: topic=t/in mode=filter (state=connected)"),
        "{sub}"
    );
    let publish = tool_result(2);
    assert!(
        publish.contains("publish ok: topic=t/out bytes=5 qos=1 (state=connected)"),
        "{publish}"
    );
    let rule = tool_result(3);
    assert!(
        rule.starts_with("rule set: topic=t/in path=temp > 30 (cooldown 60000 ms)"),
        "{rule}"
    );
    // The agent's own turn: the injected message is the user's last one,
    // exactly as the toolset formats it (host printf: %g prints numbers).
    let injected = last_of(&messages_of(&requests[4]), "user").to_string();
    assert_eq!(
        injected,
        "[MQTT message forwarded for analysis]\ntopic: t/in\npayload: {\"temp\":42}\n\
         forward reason: threshold rule matched: temp= 42 > 30\n\
         Reply with a short summary or alert for the user. Keep it brief and do not restate routine data."
    );
    // {"temp":20} never reached the model.
    for r in &requests {
        assert!(
            !r.body_text().contains(r#"\"temp\":20"#),
            "temp 20 was forwarded"
        );
    }
    let disconnect = tool_result(6);
    assert!(
        disconnect.starts_with("disconnect ok: was_connected=1, state=stopped"),
        "{disconnect}"
    );
    assert!(
        output.contains("@@ heap baseline="),
        "no heap line:\n{output}"
    );
}

#[test]
#[ignore = "needs UPSTREAM_AGENT_SRC and PAHOMQTT_SRC (tests/run-all runs it when they are there)"]
fn upstream_mqtt_without_a_broker_url() {
    let exe = build("unset", "");
    for runner in runners() {
        let server = LlmServer::start(vec![
            ScriptedResponse::tool_calls(&[(
                "c1",
                "mqtt_publish",
                &[r#"{"topic":"t/out","message":"hello"}"#],
            )]),
            ScriptedResponse::text(&["MQTT is not configured on this board."]),
        ])
        .unwrap();
        let (output, passed) = run_driver(&runner, &exe, &["unset", &server.url()], |_| {});
        eprintln!("{output}");
        assert!(passed, "mqtt_host {runner:?} failed:\n{output}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "requests to the model");
        let answer = last_of(&messages_of(&requests[1]), "tool").to_string();
        assert_eq!(
            answer,
            "error: the tool \"mqtt_publish\" is not configured: PKG_AGENT_TOOL_MQTT_BROKER_URL is empty \
             (menuconfig: Agent Tools Configuration, MQTT Connection); the tool was not run"
        );
    }
}
