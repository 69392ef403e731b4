//! Multimodal messages end to end: a message of text and files put on the
//! running agent's hub, the files uploaded to the scripted file server
//! (real TCP, multipart parsed) or sent inline, the request the scripted
//! model received checked part by part, the failures answered with a reply
//! that says what went wrong, and the heap back to its baseline after each
//! scenario. One test function in a process of its own, so that nothing
//! else allocates beside the heap figures (as tests/agent_lifecycle.rs).

use rtt_agent::abi::messages::{TYPE_IMAGE, TYPE_TEXT, TYPE_VIDEO};
use rtt_agent::abilities::multimodal::{self, Mode};
use rtt_agent::cjson::sys::*;
use rtt_agent::host::heap;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::file_server::{FileServer, UploadAnswer};
use rtt_agent_testkit::llm_server::*;
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::time::Duration;

/// Run `f`; the heap must be where it was before.
fn heap_neutral(what: &str, f: impl FnOnce()) {
    // The settings the tests set are the test's own heap blocks.
    multimodal::set_overrides(multimodal::Overrides::default());
    let baseline = settled_used();
    f();
    multimodal::set_overrides(multimodal::Overrides::default());
    assert_eq!(
        settled_used(),
        baseline,
        "{what}: heap not back to its baseline"
    );
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/multimodal-test");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A file of `len` bytes of every value (a fixed pseudo-random sequence).
fn write_file(name: &str, len: usize) -> (String, Vec<u8>) {
    let mut x: u32 = 0x1234_5678 ^ len as u32;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect();
    let path = dir().join(name);
    std::fs::write(&path, &data).unwrap();
    (path.to_string_lossy().into_owned(), data)
}

fn set_mode(mode: Mode, files: Option<&FileServer>, max_bytes: Option<usize>) {
    multimodal::set_overrides(multimodal::Overrides {
        mode: Some(mode),
        upload_url: files.map(|f| CString::new(f.upload_url()).unwrap()),
        download_url: files.map(|f| CString::new(f.download_url()).unwrap()),
        max_bytes,
    });
}

/// The parts of the user message (`messages[1].content`) of a request:
/// (type, text or URL).
fn user_parts(req: &RecordedRequest) -> Vec<(String, String)> {
    let body = CString::new(req.body.clone()).unwrap();
    let mut out = Vec::new();
    // SAFETY: `body` is NUL-terminated; the tree is checked, read through
    // cJSON's NULL-accepting getters, and deleted once.
    unsafe {
        let root = cJSON_Parse(body.as_ptr());
        assert!(!root.is_null(), "the request body is not JSON");
        let msgs = cJSON_GetObjectItemCaseSensitive(root, c"messages".as_ptr());
        let user = cJSON_GetArrayItem(msgs, 1);
        let content = cJSON_GetObjectItemCaseSensitive(user, c"content".as_ptr());
        assert_eq!(
            (*content).type_ & 0xff,
            cJSON_Array,
            "the content is not an array"
        );
        let s = |o: *mut cJSON, k: &CStr| {
            let it = cJSON_GetObjectItemCaseSensitive(o, k.as_ptr());
            if it.is_null() || (*it).valuestring.is_null() {
                String::new()
            } else {
                CStr::from_ptr((*it).valuestring)
                    .to_string_lossy()
                    .into_owned()
            }
        };
        for i in 0..cJSON_GetArraySize(content) {
            let part = cJSON_GetArrayItem(content, i);
            let kind = s(part, c"type");
            let value = if kind == "text" {
                s(part, c"text")
            } else {
                let k = CString::new(kind.clone()).unwrap();
                s(cJSON_GetObjectItemCaseSensitive(part, k.as_ptr()), c"url")
            };
            out.push((kind, value));
        }
        cJSON_Delete(root);
    }
    out
}

/// Strict base64 (RFC 4648, padded): `None` for anything else.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let b = text.as_bytes();
    if b.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::new();
    for (n, q) in b.chunks(4).enumerate() {
        let last = n == b.len() / 4 - 1;
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut v: u32 = 0;
        for &c in &q[..4 - pad] {
            v = v << 6 | u32::from(val(c)?);
        }
        v <<= 6 * pad as u32;
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

#[test]
fn multimodal_messages() {
    let _serial = lock();
    // A first run outside the figures: std makes some state of its own the
    // first time (thread bookkeeping), which stays.
    upload_then_the_request_carries_the_download_url();
    heap_neutral("upload", upload_then_the_request_carries_the_download_url);
    heap_neutral("inline", inline_data_url_streamed_from_the_file);
    heap_neutral("tool rounds", tool_rounds_reuse_the_upload);
    heap_neutral("missing file", a_missing_file_is_answered);
    heap_neutral("upload failures", failed_uploads_are_answered);
    heap_neutral("size cap and type", the_cap_and_unknown_types_are_answered);
    heap_neutral("file-op thread", the_file_operation_thread);
    multimodal::set_overrides(multimodal::Overrides::default());
}

fn upload_then_the_request_carries_the_download_url() {
    let (image, image_bytes) = write_file("cat.png", 3000);
    let (video, video_bytes) = write_file("clip.MP4", 700);
    let files = FileServer::start(vec![]).unwrap();
    set_mode(Mode::Upload, Some(&files), None);
    let llm = uncounted_server(|| vec![ScriptedResponse::text(&["A cat ", "and a clip."])]);
    let agent = Agent::start(&llm, Overrides::default());
    let reply = ask_items(&[
        (TYPE_TEXT, "what is in these?"),
        (TYPE_IMAGE, &image),
        (TYPE_VIDEO, &video),
    ]);
    drop(agent);
    assert_eq!(reply, "A cat and a clip.");

    let uploads = files.uploads();
    assert_eq!(uploads.len(), 2, "{:?}", files.errors());
    assert!(files.errors().is_empty(), "{:?}", files.errors());
    for (u, name, kind, bytes) in [
        (&uploads[0], "cat.png", "image/png", &image_bytes),
        (&uploads[1], "clip.MP4", "video/mp4", &video_bytes),
    ] {
        assert_eq!(u.path, "/upload");
        assert!(u.content_type.starts_with("multipart/form-data; boundary="));
        assert_eq!(u.field, "file");
        assert_eq!(u.filename, name);
        assert_eq!(u.part_type, kind);
        assert!(
            u.data == *bytes,
            "the uploaded bytes differ from the file ({} bytes uploaded, {} in the file)",
            u.data.len(),
            bytes.len()
        );
        assert_eq!(u.file_id.as_deref().map(str::len), Some(36));
    }
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1);
    let parts = user_parts(&reqs[0]);
    let url = |i: usize| {
        format!(
            "{}/{}",
            files.download_url(),
            uploads[i].file_id.as_deref().unwrap()
        )
    };
    assert_eq!(
        parts,
        vec![
            ("text".to_string(), "what is in these?".to_string()),
            ("image_url".to_string(), url(0)),
            ("video_url".to_string(), url(1)),
        ]
    );
}

fn inline_data_url_streamed_from_the_file() {
    // Larger than the read buffer (384 bytes) and the request writer's
    // (512), and not a multiple of 3: the last group is padded.
    let (photo, bytes) = write_file("photo.JPG", 5000);
    const { assert!(5000 > rtt_agent::wire::chat::inline_file::READ_CHUNK * 2) };
    let files = FileServer::start(vec![]).unwrap();
    set_mode(Mode::Inline, Some(&files), None);
    let llm = uncounted_server(|| {
        vec![
            ScriptedResponse::text(&["a photo"]),
            ScriptedResponse::text(&["still the photo"]),
        ]
    });
    let agent = Agent::start(&llm, Overrides::default());
    let first = ask_items(&[(TYPE_TEXT, "describe it"), (TYPE_IMAGE, &photo)]);
    // The next turn sends the conversation again, the photo included.
    let second = ask_items(&[(TYPE_TEXT, "and now?")]);
    // A file removed while its message is in the conversation: the request
    // cannot be made, and the reply says so.
    std::fs::remove_file(&photo).unwrap();
    let third = ask_items(&[(TYPE_TEXT, "once more")]);
    drop(agent);
    assert_eq!(first, "a photo");
    assert_eq!(second, "still the photo");
    assert!(
        third.starts_with("error: the request to the model failed: a file of the message could not be read while sending"),
        "{third}"
    );
    assert!(files.uploads().is_empty(), "inline mode uploaded");

    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2, "the third turn reached the model");
    // A message of one text item stays a plain string.
    let later = messages_of(&reqs[1]);
    assert_eq!(roles(&later), ["system", "user", "assistant", "user"]);
    assert_eq!(later[3].content, "and now?");
    for req in &reqs {
        assert_eq!(
            req.header("content-length").and_then(|v| v.parse().ok()),
            Some(req.body.len()),
            "Content-Length differs from the body"
        );
        let parts = user_parts(req);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], ("text".into(), "describe it".into()));
        assert_eq!(parts[1].0, "image_url");
        let data = parts[1]
            .1
            .strip_prefix("data:image/jpeg;base64,")
            .unwrap_or_else(|| panic!("not a JPEG data URL: {:.60}", parts[1].1));
        let decoded = base64_decode(data);
        assert!(
            decoded.as_deref() == Some(&bytes[..]),
            "the data URL's bytes differ from the file ({:?} bytes decoded, {} in the file)",
            decoded.map(|d| d.len()),
            bytes.len()
        );
    }
}

/// A message with an image and a tool round: the image is uploaded once,
/// every request of the turn carries its URL, and the tool's result stays a
/// plain string.
fn tool_rounds_reuse_the_upload() {
    let (image, _) = write_file("sum.png", 900);
    let files = FileServer::start(vec![]).unwrap();
    set_mode(Mode::Upload, Some(&files), None);
    let llm = uncounted_server(|| {
        vec![
            ScriptedResponse::tool_calls(&[("t1", "add", &["{\"a\":2,\"b\":3}"])]),
            ScriptedResponse::text(&["The picture says 5."]),
        ]
    });
    let agent = Agent::start(&llm, Overrides::default());
    let reply = ask_items(&[(TYPE_TEXT, "add what you see"), (TYPE_IMAGE, &image)]);
    drop(agent);
    assert_eq!(reply, "The picture says 5.");
    let uploads = files.uploads();
    assert_eq!(uploads.len(), 1, "uploaded more than once");
    let url = format!(
        "{}/{}",
        files.download_url(),
        uploads[0].file_id.as_deref().unwrap()
    );
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        assert_eq!(user_parts(req)[1], ("image_url".to_string(), url.clone()));
    }
    let second = messages_of(&reqs[1]);
    assert_eq!(roles(&second), ["system", "user", "assistant", "tool"]);
    assert_eq!(
        (second[3].tool_call_id.as_str(), second[3].content.as_str()),
        ("t1", "2 + 3 = 5")
    );
}

fn a_missing_file_is_answered() {
    let missing = dir().join("no-such-image.png");
    let missing = missing.to_string_lossy().into_owned();
    let files = FileServer::start(vec![]).unwrap();
    for mode in [Mode::Inline, Mode::Upload] {
        set_mode(mode, Some(&files), None);
        let llm = uncounted_server(Vec::new);
        let agent = Agent::start(&llm, Overrides::default());
        let reply = ask_items(&[(TYPE_TEXT, "look"), (TYPE_IMAGE, &missing)]);
        drop(agent);
        assert_eq!(
            reply,
            format!("error: cannot send the image {missing}: no such file"),
            "{mode:?}"
        );
        assert!(llm.requests().is_empty(), "{mode:?}: the model was asked");
    }
    assert!(files.uploads().is_empty());
    // Another thread's to_content fails: its reason is kept (on the heap)
    // for that thread, which never asks; the tear-down frees it, so the
    // heap is back at its baseline (the caller's heap_neutral checks).
    set_mode(Mode::Inline, None, None);
    let llm = uncounted_server(|| vec![ScriptedResponse::text(&["Hello"])]);
    let agent = Agent::start(&llm, Overrides::default());
    to_content_fails_on_this_thread(&missing);
    // The loop's own next message does not see that reason.
    assert_eq!(ask_items(&[(TYPE_TEXT, "hi")]), "Hello");
    drop(agent);
    // With no agent running there is nobody to ask for a reason: none is
    // kept (utils.h's to_content used on its own leaves no heap behind).
    let before = heap::used();
    to_content_fails_on_this_thread(&missing);
    assert_eq!(heap::used(), before, "a reason kept with no agent running");
}

/// utils.h's `to_content` called on this thread (as C code would) for a
/// message with the image `path`, which does not exist: it fails.
fn to_content_fails_on_this_thread(path: &str) {
    use rtt_agent::abi::messages::{messages_append, messages_create, messages_destroy};
    let path = CString::new(path).unwrap();
    let msg = messages_create(1);
    // SAFETY: `msg` is a live set made here, `path` NUL-terminated and
    // copied; the set is destroyed once, after to_content has read it.
    unsafe {
        assert_eq!(messages_append(msg, TYPE_IMAGE, path.as_ptr()), 0);
        assert!(rtt_agent::runtime::utils::to_content(msg).is_null());
        messages_destroy(msg);
    }
}

fn failed_uploads_are_answered() {
    let (image, _) = write_file("dog.png", 1500);
    let files = FileServer::start(vec![
        UploadAnswer::Status(500),
        UploadAnswer::Body("{\"code\":1,\"msg\":\"disk full\"}".into()),
        UploadAnswer::Body("<html>proxy error</html>".into()),
    ])
    .unwrap();
    set_mode(Mode::Upload, Some(&files), None);
    let llm = uncounted_server(Vec::new);
    let agent = Agent::start(&llm, Overrides::default());
    let expect = |why: &str| format!("error: the upload of the image {image} failed: {why}");
    assert_eq!(
        ask_items(&[(TYPE_TEXT, "a"), (TYPE_IMAGE, &image)]),
        expect("the file server answered HTTP 500")
    );
    for _ in 0..2 {
        assert_eq!(
            ask_items(&[(TYPE_TEXT, "b"), (TYPE_IMAGE, &image)]),
            expect("the file server's answer has no usable file_id")
        );
    }
    drop(agent);
    assert_eq!(files.uploads().len(), 3);

    // No file server at all: a port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    multimodal::set_overrides(multimodal::Overrides {
        mode: Some(Mode::Upload),
        upload_url: Some(CString::new(format!("http://127.0.0.1:{port}/upload")).unwrap()),
        download_url: Some(c"http://127.0.0.1:1/download".into()),
        max_bytes: None,
    });
    let agent = Agent::start(&llm, Overrides::default());
    let reply = ask_items(&[(TYPE_IMAGE, &image)]);
    drop(agent);
    assert_eq!(
        reply,
        expect("cannot connect to the file server (check PKG_AGENT_UPLOAD_URL and the network)")
    );
    assert!(llm.requests().is_empty(), "the model was asked");
}

fn the_cap_and_unknown_types_are_answered() {
    let (big, _) = write_file("big.png", 3000);
    let (odd, _) = write_file("notes.xyz", 10);
    let (empty, _) = write_file("empty.png", 0);
    let files = FileServer::start(vec![]).unwrap();
    let llm = uncounted_server(Vec::new);
    for mode in [Mode::Inline, Mode::Upload] {
        set_mode(mode, Some(&files), Some(1000));
        let agent = Agent::start(&llm, Overrides::default());
        assert_eq!(
            ask_items(&[(TYPE_IMAGE, &big)]),
            format!("error: cannot send the image {big}: it is 3000 bytes, more than the 1000 of PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE"),
        );
        assert_eq!(
            ask_items(&[(TYPE_IMAGE, &empty)]),
            format!("error: cannot send the image {empty}: it is 0 bytes (empty)"),
        );
        assert_eq!(
            ask_items(&[(TYPE_IMAGE, dir().to_str().unwrap())]),
            format!(
                "error: cannot send the image {}: not a regular file",
                dir().display()
            ),
        );
        if mode == Mode::Inline {
            let reply = ask_items(&[(TYPE_TEXT, "read this"), (TYPE_VIDEO, &odd)]);
            assert!(
                reply.starts_with(&format!(
                    "error: cannot send the video {odd} inline: unknown file type"
                )),
                "{reply}"
            );
        }
        drop(agent);
    }
    assert!(files.uploads().is_empty());
    assert!(llm.requests().is_empty());
}

/// utils.h's file-operation thread: an upload request posted to its input
/// queue is answered on the output queue; `down_load` fetches
/// `{DOWNLOAD_URL}/{file_id}` into a file; `agent_up_load` returns the URL.
fn the_file_operation_thread() {
    use multimodal::*;
    use rtt_agent::rtt::{rt_mq_recv, rt_mq_send};
    let (image, bytes) = write_file("bird.gif", 2000);
    let files = FileServer::start(vec![]).unwrap();
    set_mode(Mode::Upload, Some(&files), None);
    assert!(get_agent_file_op_mq_input().is_null());
    assert!(!agent_file_op_init().is_null());
    let again = agent_file_op_init();
    assert!(!again.is_null(), "a second init returns the running thread");
    let (input, output) = (get_agent_file_op_mq_input(), get_agent_file_op_mq_output());
    assert!(!input.is_null() && !output.is_null());

    // SAFETY: file_op_req is integers and byte arrays: all zeroes is valid.
    let mut req: file_op_req = unsafe { std::mem::zeroed() };
    req.op = CMD_AGENT_FILE_UPLOAD;
    for (d, s) in req.path.iter_mut().zip(image.bytes()) {
        *d = s as core::ffi::c_char;
    }
    let size = std::mem::size_of::<file_op_req>();
    // SAFETY: live queues of file_op_req messages; `req` and `answer` are
    // one message each.
    let answer = unsafe {
        assert_eq!(rt_mq_send(input, &req as *const _ as *const _, size), 0);
        let mut answer: file_op_req = std::mem::zeroed();
        let n = rt_mq_recv(output, &mut answer as *mut _ as *mut _, size, 30_000);
        assert_eq!(n, size as isize);
        answer
    };
    assert_eq!(answer.op, CMD_AGENT_FILE_URL);
    // SAFETY: both fields were NUL-terminated by the thread.
    let (url, id) = unsafe {
        (
            CStr::from_ptr(answer.path.as_ptr())
                .to_string_lossy()
                .into_owned(),
            CStr::from_ptr(answer.file_id.as_ptr())
                .to_string_lossy()
                .into_owned(),
        )
    };
    assert_eq!(id.len(), 36);
    assert_eq!(url, format!("{}/{id}", files.download_url()));

    // agent_up_load: on the calling thread, the URL in its static buffer.
    let path = CString::new(image.clone()).unwrap();
    // SAFETY: a NUL-terminated path; the result is the library's static.
    let direct = unsafe { CStr::from_ptr(agent_up_load(path.as_ptr())) }
        .to_string_lossy()
        .into_owned();
    let second_id = files.uploads()[1].file_id.clone().unwrap();
    assert_eq!(direct, format!("{}/{second_id}", files.download_url()));
    let gone = CString::new(dir().join("gone.png").to_string_lossy().into_owned()).unwrap();
    assert_eq!(
        // SAFETY: as above.
        unsafe { *agent_up_load(gone.as_ptr()) },
        0,
        "a failed upload gives \"\""
    );

    // down_load: queued, done by the thread.
    let target = dir().join("bird-copy.gif");
    let _ = std::fs::remove_file(&target);
    let t = CString::new(target.to_string_lossy().into_owned()).unwrap();
    let cid = CString::new(id.clone()).unwrap();
    // SAFETY: two NUL-terminated strings, borrowed.
    assert_eq!(unsafe { down_load(t.as_ptr(), cid.as_ptr()) }, 0);
    let mut copied = None;
    for _ in 0..200 {
        if let Ok(b) = std::fs::read(&target) {
            if b.len() == bytes.len() {
                copied = Some(b);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(
        copied.as_deref() == Some(&bytes[..]),
        "the download differs from the file"
    );
    assert_eq!(files.downloads(), vec![id]);

    agent_file_op_deinit();
    assert!(get_agent_file_op_mq_input().is_null());
    assert_ne!(
        // SAFETY: as above.
        unsafe { down_load(t.as_ptr(), cid.as_ptr()) },
        0,
        "queued after deinit"
    );
    agent_file_op_deinit(); // twice: nothing to do
}
