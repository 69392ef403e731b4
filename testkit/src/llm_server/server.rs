//! The server: the listener, one thread per connection, and the records of
//! what was received and what was sent.

use super::request::{read_request, ConnReader, ReqError};
use super::response::{write_ends, ScriptedResponse, Transfer};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// Which connection it came on (0, 1, ... in accept order); equal values
    /// mean the client reused a kept-alive connection.
    pub conn: usize,
    pub method: String,
    pub path: String,
    pub version: String,
    /// In arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body after removing any chunked framing.
    pub body: Vec<u8>,
    /// The body came with `Transfer-Encoding: chunked`.
    pub chunked: bool,
}

impl RecordedRequest {
    /// First value of a header, name compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(super) fn wants_close(&self) -> bool {
        let tokens = self.header_all("Connection").join(",").to_ascii_lowercase();
        let has = |t: &str| tokens.split(',').any(|x| x.trim() == t);
        if self.version == "HTTP/1.0" {
            !has("keep-alive")
        } else {
            has("close")
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything written.
    Complete,
    /// Closed on purpose after `cut` bytes.
    Cut,
    /// Stalled and then closed (hold elapsed or server dropped).
    Stalled,
    /// A write failed (usually the client went away).
    Failed(String),
}

/// What the server did for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentResponse {
    /// Index into [`LlmServer::requests`]; `None` for the 400 sent to a
    /// request that could not be parsed.
    pub request: Option<usize>,
    pub status: u16,
    /// Sizes of the writes of the status line and headers.
    pub head_writes: Vec<usize>,
    /// Sizes of the body writes that succeeded (of the fixed body).
    pub body_writes: Vec<usize>,
    /// Pieces of a generated body ([`super::Generated`]) written.
    pub generated: u64,
    pub outcome: Outcome,
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

type Model = dyn Fn(&RecordedRequest) -> ScriptedResponse + Send + Sync;

struct State {
    queue: VecDeque<ScriptedResponse>,
    model: Option<Arc<Model>>,
    requests: Vec<RecordedRequest>,
    sent: Vec<SentResponse>,
    errors: Vec<String>,
    /// Clones of open connections, so dropping the server can unblock
    /// workers stuck in a read or write.
    streams: HashMap<usize, TcpStream>,
    workers: Vec<JoinHandle<()>>,
    next_conn: usize,
    shutting_down: bool,
    /// The acceptor thread has started (see [`LlmServer::start`]).
    accepting: bool,
    /// Queued responses already served (kept until the server is dropped).
    spent: Vec<ScriptedResponse>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled on every new record and on shutdown; waiters re-check.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking model closure must not take the whole server down.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }

    fn note_error(&self, msg: String) {
        let mut st = self.lock();
        if !st.shutting_down {
            st.errors.push(msg);
        }
        drop(st);
        self.changed.notify_all();
    }

    /// Sleeps for `d` (forever if `None`) unless the server shuts down
    /// first; returns whether it did.
    fn sleep(&self, d: Option<Duration>) -> bool {
        let st = self.lock();
        match d {
            Some(d) => {
                let (st, _) = self
                    .changed
                    .wait_timeout_while(st, d, |s| !s.shutting_down)
                    .unwrap_or_else(|e| e.into_inner());
                st.shutting_down
            }
            None => {
                let st = self
                    .changed
                    .wait_while(st, |s| !s.shutting_down)
                    .unwrap_or_else(|e| e.into_inner());
                st.shutting_down
            }
        }
    }
}

/// The server. Stops (closing every connection and joining every thread)
/// when dropped.
pub struct LlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl LlmServer {
    /// Serves `responses` in order, one per request.
    pub fn start(responses: Vec<ScriptedResponse>) -> io::Result<Self> {
        Self::launch(responses.into(), None)
    }

    /// Lets `model` answer every request that finds the queue empty.
    pub fn with_model<F>(model: F) -> io::Result<Self>
    where
        F: Fn(&RecordedRequest) -> ScriptedResponse + Send + Sync + 'static,
    {
        Self::launch(VecDeque::new(), Some(Arc::new(model)))
    }

    fn launch(queue: VecDeque<ScriptedResponse>, model: Option<Arc<Model>>) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue,
                model,
                requests: Vec::new(),
                sent: Vec::new(),
                errors: Vec::new(),
                streams: HashMap::new(),
                workers: Vec::new(),
                next_conn: 0,
                shutting_down: false,
                accepting: false,
                spent: Vec::new(),
            }),
            changed: Condvar::new(),
        });
        let sh = Arc::clone(&shared);
        // Unnamed on purpose: std copies a thread's name onto the heap as
        // the thread starts, before it can mark itself as not counted, so a
        // named server thread would move the heap figures by its name's
        // length at a moment of its own.
        let acceptor = thread::Builder::new().spawn(move || accept_loop(listener, sh))?;
        // Return once the acceptor runs: as the new thread starts, std
        // frees some of the spawn's bookkeeping, blocks this (counted)
        // thread allocated, which would otherwise move a test's heap
        // figures at a moment of its own (measured: 24 bytes, at random).
        drop(
            shared
                .changed
                .wait_while(shared.lock(), |s| !s.accepting)
                .unwrap_or_else(|e| e.into_inner()),
        );
        Ok(LlmServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT/v1/chat/completions`
    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url())
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Adds a response to the end of the queue.
    pub fn push(&self, response: ScriptedResponse) {
        self.shared.lock().queue.push_back(response);
    }

    /// Queued responses not yet used.
    pub fn remaining(&self) -> usize {
        self.shared.lock().queue.len()
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Waits until at least `n` requests were recorded; false on timeout.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |s| s.requests.len() >= n)
    }

    /// What was sent so far, in order of completion.
    pub fn sent(&self) -> Vec<SentResponse> {
        self.shared.lock().sent.clone()
    }

    /// Waits until at least `n` responses were finished (completed, cut,
    /// stalled and closed, or failed); false on timeout.
    pub fn wait_for_sent(&self, n: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |s| s.sent.len() >= n)
    }

    /// Bad requests and network failures seen so far.
    pub fn errors(&self) -> Vec<String> {
        self.shared.lock().errors.clone()
    }

    fn wait_until(&self, timeout: Duration, done: impl Fn(&State) -> bool) -> bool {
        let st = self.shared.lock();
        let (st, _) = self
            .shared
            .changed
            .wait_timeout_while(st, timeout, |s| !done(s))
            .unwrap_or_else(|e| e.into_inner());
        done(&st)
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        self.shared.lock().shutting_down = true;
        self.shared.changed.notify_all();
        // The acceptor blocks in accept(); a connection of our own wakes it
        // to see the flag. If the connect fails the listener is already gone.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        // The acceptor has stopped, so no new connection can be registered
        // after this: shut every socket down to unblock its worker.
        let (streams, workers) = {
            let mut st = self.shared.lock();
            let streams: Vec<TcpStream> = st.streams.drain().map(|(_, s)| s).collect();
            (streams, std::mem::take(&mut st.workers))
        };
        for s in &streams {
            let _ = s.shutdown(Shutdown::Both);
        }
        for w in workers {
            let _ = w.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    rtt_agent::host::heap::exclude_this_thread(true);
    shared.lock().accepting = true;
    shared.changed.notify_all();
    for incoming in listener.incoming() {
        if shared.shutting_down() {
            return;
        }
        let stream = match incoming {
            Ok(s) => s,
            Err(e) => {
                shared.note_error(format!("accept: {e}"));
                // Avoid spinning when accept keeps failing (e.g. no fds left).
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let registered = stream.try_clone();
        let mut st = shared.lock();
        let conn = st.next_conn;
        st.next_conn += 1;
        match registered {
            Ok(clone) => {
                st.streams.insert(conn, clone);
            }
            Err(e) => {
                st.errors.push(format!("conn {conn}: clone: {e}"));
                continue;
            }
        }
        st.workers.retain(|w| !w.is_finished());
        let sh = Arc::clone(&shared);
        // No thread name: std would allocate it on the new thread before
        // serve_connection can exclude itself from the host heap's count,
        // and free it only when the connection ends.
        let spawned = thread::Builder::new().spawn(move || serve_connection(stream, conn, sh));
        match spawned {
            Ok(h) => st.workers.push(h),
            Err(e) => {
                st.streams.remove(&conn);
                st.errors.push(format!("conn {conn}: spawn: {e}"));
            }
        }
    }
}

fn serve_connection(stream: TcpStream, conn: usize, shared: Arc<Shared>) {
    // The server shares the process with the code under test: keep its
    // memory out of the host heap's `used`, which tests compare exactly.
    rtt_agent::host::heap::exclude_this_thread(true);
    // Each write must leave as its own segment, or the splits are undone by
    // Nagle's algorithm before the client sees them.
    let _ = stream.set_nodelay(true);
    let mut reader = match stream.try_clone() {
        Ok(s) => ConnReader::new(s),
        Err(e) => {
            shared.note_error(format!("conn {conn}: clone: {e}"));
            shared.lock().streams.remove(&conn);
            return;
        }
    };
    let mut out = stream;
    loop {
        let req = match read_request(&mut reader, &mut out, conn) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(ReqError::Io(e)) => {
                shared.note_error(format!("conn {conn}: reading request: {e}"));
                break;
            }
            Err(ReqError::Bad(why)) => {
                shared.note_error(format!("conn {conn}: bad request: {why}"));
                let resp = ScriptedResponse::error(400, &why, "invalid_request_error", None);
                let sent = send_response(&shared, &mut out, &resp, true, None);
                record_sent(&shared, sent);
                break;
            }
        };
        let close_requested = req.wants_close();

        // Record before answering: a test waiting for the request sees it
        // even while the answer stalls, and the model sees the same record.
        let (index, scripted, model) = {
            let mut st = shared.lock();
            st.requests.push(req.clone());
            let index = st.requests.len() - 1;
            (index, st.queue.pop_front(), st.model.clone())
        };
        shared.changed.notify_all();
        let queued = scripted.is_some();
        let resp = match (scripted, model) {
            (Some(r), _) => r,
            (None, Some(model)) => match catch_unwind(AssertUnwindSafe(|| model(&req))) {
                Ok(r) => r,
                Err(_) => {
                    shared.note_error(format!("conn {conn}: the model panicked"));
                    ScriptedResponse::error(500, "scripted model panicked", "server_error", None)
                }
            },
            (None, None) => ScriptedResponse::no_script_left(),
        };

        let close = close_requested || resp.close || resp.transfer == Transfer::Close;
        let sent = send_response(&shared, &mut out, &resp, close, Some(index));
        let keep = sent.outcome == Outcome::Complete && !close;
        if let Outcome::Failed(e) = &sent.outcome {
            shared.note_error(format!("conn {conn}: writing response: {e}"));
        }
        record_sent(&shared, sent);
        if queued {
            // Queued responses were built on the test's thread, so their
            // blocks are counted in the heap: freed here, at a moment of
            // this thread's choosing, they would move a test's heap
            // figures. They go when the server does.
            shared.lock().spent.push(resp);
        }
        if !keep || shared.shutting_down() {
            break;
        }
    }
    if !shared.shutting_down() {
        linger_close(&mut out);
    }
    let _ = out.shutdown(Shutdown::Both);
    shared.lock().streams.remove(&conn);
}

/// Closes gracefully: closing a socket with unread input makes the kernel
/// send a reset, and a reset can destroy response bytes the client has not
/// read yet (the 400 for a bad request, the tail of a close-delimited body).
/// So send our FIN, then swallow what the client still sends for a moment.
fn linger_close(out: &mut TcpStream) {
    let _ = out.shutdown(Shutdown::Write);
    let _ = out.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 4096];
    for _ in 0..64 {
        match out.read(&mut buf) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
}

fn record_sent(shared: &Shared, sent: SentResponse) {
    shared.lock().sent.push(sent);
    shared.changed.notify_all();
}

/// Writes one response under its split, delay, stall and cut rules.
fn send_response(
    shared: &Shared,
    out: &mut TcpStream,
    resp: &ScriptedResponse,
    close: bool,
    request: Option<usize>,
) -> SentResponse {
    let (body, pieces) = resp.wire_body_and_pieces();
    let head = resp.head(body.len(), close);
    let mut sent = SentResponse {
        request,
        status: resp.status,
        head_writes: Vec::new(),
        body_writes: Vec::new(),
        generated: 0,
        outcome: Outcome::Complete,
    };
    let mut first_write = true;
    // Paces writes; false when the server is shutting down.
    let pace = |first: &mut bool| -> bool {
        let wait = if *first {
            resp.first_byte_delay
        } else {
            resp.delay
        };
        if !wait.is_zero() && shared.sleep(Some(wait)) {
            return false;
        }
        *first = false;
        true
    };

    let mut pos = 0;
    for end in write_ends(&resp.head_split, head.len(), &[head.len()]) {
        if !pace(&mut first_write) {
            sent.outcome = Outcome::Failed("server shutting down".into());
            return sent;
        }
        if let Err(e) = write_flush(out, &head[pos..end]) {
            sent.outcome = Outcome::Failed(e.to_string());
            return sent;
        }
        sent.head_writes.push(end - pos);
        pos = end;
    }

    let len = body.len();
    let stall_at = resp.stall.map(|s| s.after.min(len));
    let cut_at = resp.cut.map(|c| c.min(len));
    let mut ends = write_ends(&resp.split, len, &pieces);
    // Stop points become write boundaries so that exactly N bytes go out.
    ends.extend(stall_at.iter().chain(cut_at.iter()).filter(|&&p| p > 0));
    ends.sort_unstable();
    ends.dedup();

    let mut stalled = false;
    let mut pos = 0;
    let mut next = ends.into_iter();
    loop {
        if let (Some(at), Some(stall)) = (stall_at, resp.stall) {
            if !stalled && pos == at {
                stalled = true;
                let shutdown = shared.sleep(stall.hold);
                if shutdown || !stall.resume {
                    let _ = out.shutdown(Shutdown::Both);
                    sent.outcome = Outcome::Stalled;
                    return sent;
                }
            }
        }
        if cut_at == Some(pos) {
            let _ = out.shutdown(Shutdown::Both);
            sent.outcome = Outcome::Cut;
            return sent;
        }
        let Some(end) = next.next() else { break };
        if !pace(&mut first_write) {
            sent.outcome = Outcome::Failed("server shutting down".into());
            return sent;
        }
        if let Err(e) = write_flush(out, &body[pos..end]) {
            sent.outcome = Outcome::Failed(e.to_string());
            return sent;
        }
        sent.body_writes.push(end - pos);
        pos = end;
    }
    if let Some(g) = &resp.generated {
        send_generated(
            shared,
            out,
            resp.transfer == Transfer::Chunked,
            g,
            &mut sent,
        );
    }
    sent
}

/// Writes a generated body piece by piece until it ends, the client goes
/// away or the server shuts down.
fn send_generated(
    shared: &Shared,
    out: &mut TcpStream,
    chunked: bool,
    g: &super::response::Generated,
    sent: &mut SentResponse,
) {
    let mut i = 0u64;
    loop {
        if shared.shutting_down() {
            sent.outcome = Outcome::Failed("server shutting down".into());
            return;
        }
        let Some(piece) = (g.next)(i) else { break };
        i += 1;
        if piece.is_empty() {
            continue;
        }
        if !g.interval.is_zero() && shared.sleep(Some(g.interval)) {
            sent.outcome = Outcome::Failed("server shutting down".into());
            return;
        }
        let written = if chunked {
            let mut framed = format!("{:x}\r\n", piece.len()).into_bytes();
            framed.extend_from_slice(&piece);
            framed.extend_from_slice(b"\r\n");
            write_flush(out, &framed)
        } else {
            write_flush(out, &piece)
        };
        if let Err(e) = written {
            sent.outcome = Outcome::Failed(e.to_string());
            return;
        }
        sent.generated += 1;
    }
    if chunked {
        if let Err(e) = write_flush(out, b"0\r\n\r\n") {
            sent.outcome = Outcome::Failed(e.to_string());
        }
    }
}

pub(super) fn write_flush(out: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}
