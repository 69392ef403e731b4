//! The ABI check: the Rust definitions against the hand-written headers in
//! `include/` (and the host port against `host/include/`).
//!
//! 1. Function signatures: cbindgen renders the C prototype of every function
//!    the Rust code exports or imports; a C file includes our headers and then
//!    those prototypes. A redeclaration with a different type is a compile
//!    error, so any drift fails the build of the check.
//! 2. Layouts, enum values and macros: every `sizeof`/`offsetof`/value is
//!    computed here by Rust and asserted by the C compiler with
//!    `_Static_assert` against the headers.
//! 3. A negative control proves the mechanism can fail.

use core::mem::{offset_of, size_of};
use rtt_agent::abi::messages::*;
#[cfg(feature = "multimodal")]
use rtt_agent::abilities::multimodal::*;
use rtt_agent::rtt::board::BoardConfig;
use rtt_agent::runtime::config::*;
use rtt_agent::runtime::hub::*;
use rtt_agent::runtime::prompt::*;
use rtt_agent::runtime::tools::*;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Our cJSON declarations return nothing where cJSON >= 1.7.13 returns
/// cJSON_bool (see src/cjson/sys.rs): deliberately different, left out.
const NOT_CHECKED: &[&str] = &["cJSON_AddItemToArray", "cJSON_AddItemToObject"];

fn generated_prototypes() -> String {
    let out = root().join("target/abi/fns.h");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let status = Command::new("cbindgen")
        .current_dir(root())
        .args(["--config", "cbindgen.toml", "--crate", "rtt-agent", "--quiet", "--output"])
        .arg(&out)
        .status()
        .expect("cbindgen is needed for the ABI check: `cargo install cbindgen` (the test command installs it)");
    assert!(status.success(), "cbindgen failed");
    let text = std::fs::read_to_string(&out).unwrap();
    // Drop the deliberately different declarations (each is one line).
    text.lines()
        .filter(|l| {
            !NOT_CHECKED
                .iter()
                .any(|name| l.contains(&format!(" {name}(")))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn layout_facts() -> Vec<(String, usize)> {
    let mut facts: Vec<(String, usize)> = Vec::new();
    macro_rules! size {
        ($c:literal, $t:ty) => {
            facts.push((format!("sizeof({})", $c), size_of::<$t>()))
        };
    }
    macro_rules! off {
        ($c:literal, $t:ty, $f:ident) => {
            facts.push((
                format!("offsetof({}, {})", $c, stringify!($f)),
                offset_of!($t, $f),
            ))
        };
        ($c:literal, $t:ty, $f:ident, $cf:literal) => {
            facts.push((format!("offsetof({}, {})", $c, $cf), offset_of!($t, $f)))
        };
    }
    macro_rules! value {
        ($c:literal, $v:expr) => {
            facts.push(($c.to_string(), $v as usize))
        };
    }
    size!("MessageType", MessageType);
    size!("MessageItem", MessageItem);
    off!("MessageItem", MessageItem, message_type);
    off!("MessageItem", MessageItem, content);
    size!("Messages", Messages);
    off!("Messages", Messages, message_ptr);
    off!("Messages", Messages, max_size);
    off!("Messages", Messages, current_size);
    size!("MessageHub", MessageHub);
    off!("MessageHub", MessageHub, input_mailbox);
    off!("MessageHub", MessageHub, output_mailbox);
    off!("MessageHub", MessageHub, put_message);
    off!("MessageHub", MessageHub, get_message);
    size!("AgentToolRet", AgentToolRet);
    off!("AgentToolRet", AgentToolRet, ret);
    off!("AgentToolRet", AgentToolRet, messages);
    size!("AgentToolList", AgentToolList);
    off!("AgentToolList", AgentToolList, tool_obj);
    off!("AgentToolList", AgentToolList, ret);
    off!("AgentToolList", AgentToolList, execute_func);
    off!("AgentToolList", AgentToolList, next);
    #[cfg(feature = "tool-options")]
    {
        use rtt_agent::abilities::tool_options::AgentToolOptions;
        size!("agent_tool_options_t", AgentToolOptions);
        off!("agent_tool_options_t", AgentToolOptions, timeout_ms);
        off!("agent_tool_options_t", AgentToolOptions, retries);
        off!("agent_tool_options_t", AgentToolOptions, direct);
        off!("agent_tool_options_t", AgentToolOptions, reserved);
    }
    size!("RoleType", RoleType);
    off!("agent_runtime_config_t", agent_runtime_config_t, api_key);
    off!("agent_runtime_config_t", agent_runtime_config_t, model_name);
    off!("agent_runtime_config_t", agent_runtime_config_t, api_url);
    off!(
        "agent_runtime_config_t",
        agent_runtime_config_t,
        is_configured
    );
    size!("struct agent_board_config", BoardConfig);
    off!("struct agent_board_config", BoardConfig, api_key);
    off!("struct agent_board_config", BoardConfig, keep_reasoning);
    off!("struct agent_board_config", BoardConfig, reply_timeout_ms);
    off!("struct agent_board_config", BoardConfig, request_timeout_ms);
    off!("struct agent_board_config", BoardConfig, multimodal_mode);
    off!("struct agent_board_config", BoardConfig, upload_url);
    off!("struct agent_board_config", BoardConfig, download_url);
    off!(
        "struct agent_board_config",
        BoardConfig,
        file_op_thread_size
    );
    off!(
        "struct agent_board_config",
        BoardConfig,
        multimodal_max_bytes
    );
    off!("struct agent_board_config", BoardConfig, cli_stack_size);
    size!("cJSON", rtt_agent::cjson::sys::cJSON);
    off!("cJSON", rtt_agent::cjson::sys::cJSON, type_, "type");
    off!("cJSON", rtt_agent::cjson::sys::cJSON, valuestring);
    off!("cJSON", rtt_agent::cjson::sys::cJSON, valueint);
    off!("cJSON", rtt_agent::cjson::sys::cJSON, valuedouble);
    off!("cJSON", rtt_agent::cjson::sys::cJSON, string);
    // The multimodal part's file thread: only with it.
    #[cfg(feature = "multimodal")]
    {
        size!("file_op_req", file_op_req);
        off!("file_op_req", file_op_req, op);
        off!("file_op_req", file_op_req, path);
        off!("file_op_req", file_op_req, file_id);
        size!("file_op_type_t", file_op_type_t);
        value!("CMD_AGENT_FILE_UPLOAD", CMD_AGENT_FILE_UPLOAD);
        value!("CMD_AGENT_FILE_DOWNLOAD", CMD_AGENT_FILE_DOWNLOAD);
        value!("CMD_AGENT_FILE_EXIT", CMD_AGENT_FILE_EXIT);
        value!("CMD_AGENT_FILE_EXIT_COMPLETE", CMD_AGENT_FILE_EXIT_COMPLETE);
        value!("CMD_AGENT_FILE_URL", CMD_AGENT_FILE_URL);
    }
    value!("TYPE_TEXT", TYPE_TEXT);
    value!("TYPE_AUDIO", TYPE_AUDIO);
    value!("TYPE_IMAGE", TYPE_IMAGE);
    value!("TYPE_VIDEO", TYPE_VIDEO);
    value!("TYPE_NULL", TYPE_NULL);
    value!("ROLE_SYSTEM", ROLE_SYSTEM);
    value!("ROLE_USER", ROLE_USER);
    value!("ROLE_ASSISTANT", ROLE_ASSISTANT);
    value!("ROLE_TOOL", ROLE_TOOL);
    value!(
        "MESSAGE_HUB_INPUT_MAILBOX_SIZE",
        MESSAGE_HUB_INPUT_MAILBOX_SIZE
    );
    value!(
        "MESSAGE_HUB_OUTPUT_MAILBOX_SIZE",
        MESSAGE_HUB_OUTPUT_MAILBOX_SIZE
    );
    value!("AGENT_CFG_API_KEY_MAX", AGENT_CFG_API_KEY_MAX);
    value!("AGENT_CFG_MODEL_MAX", AGENT_CFG_MODEL_MAX);
    value!("AGENT_CFG_API_URL_MAX", AGENT_CFG_API_URL_MAX);
    value!("cJSON_String", rtt_agent::cjson::sys::cJSON_String);
    value!("cJSON_Object", rtt_agent::cjson::sys::cJSON_Object);
    value!("cJSON_Array", rtt_agent::cjson::sys::cJSON_Array);
    value!("cJSON_Number", rtt_agent::cjson::sys::cJSON_Number);
    facts
}

const HEADERS: &str = r#"
/* The multimodal declarations of utils.h are checked too (the host's
 * rtconfig.h keeps the option off; the library has it at run time). */
#define PKG_AGENT_MULTIMODAL_ENABLE 1
#include <stddef.h>
#include <rtthread.h>
#include <rt_host.h>
#include "MessageHub.h"
#include "utils.h"
#include "chat.h"
#include "tool_base.h"
#include "tool_func.h"
#include "context.h"
#include "prompt.h"
#include "AgentConfig.h"
#include "AgentLoop.h"
#include "AgentRuntime.h"
#include "AgentChannels.h"
#include "AgentDebugChannel.h"
#include "AgentWebChannel.h"
#include "AgentExt.h"
#include "agent_glue.h"
#include <string.h>
/* The host port's own functions are checked against host/include too. */
#define RTT_AGENT_HOST_PORT 1
"#;

/// Compile C source against the headers (compile only).
fn compile(name: &str, source: &str) -> Result<(), String> {
    let dir = root().join("target/abi");
    std::fs::create_dir_all(&dir).unwrap();
    let c_file = dir.join(format!("{name}.c"));
    std::fs::write(&c_file, source).unwrap();
    let cjson = ["/usr/include/cjson", "/usr/local/include/cjson"]
        .iter()
        .find(|d| std::path::Path::new(d).join("cJSON.h").exists())
        .expect("cJSON.h (apt-get install libcjson-dev)");
    let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .current_dir(root())
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .args([
            "-Iinclude",
            "-Iinclude/tools",
            "-Iinclude/channels",
            "-Ihost/include",
            "-Iglue",
        ])
        .arg(format!("-I{cjson}"))
        .arg(&c_file)
        .output()
        .expect("run the C compiler");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn rust_signatures_match_the_headers() {
    let source = format!("{HEADERS}\n{}\n", generated_prototypes());
    if let Err(e) = compile("abi_signatures", &source) {
        panic!("a Rust signature differs from include/ (or host/include/):\n{e}");
    }
}

#[test]
fn rust_layouts_and_values_match_the_headers() {
    let mut source = String::from(HEADERS);
    for (expr, value) in layout_facts() {
        source.push_str(&format!(
            "_Static_assert(({expr}) == {value}, \"{expr} is {value} in Rust\");\n"
        ));
    }
    if let Err(e) = compile("abi_layouts", &source) {
        panic!("a layout, enum value or macro differs between Rust and include/:\n{e}");
    }
}

/// The check must be able to fail: a prototype that differs from the header,
/// and a layout fact that is off by one, are both rejected.
#[test]
fn the_check_rejects_drift() {
    let wrong_signature = format!("{HEADERS}\nint messages_create(int max_size);\n");
    assert!(compile("abi_negative_signature", &wrong_signature).is_err());
    let wrong_layout = format!(
        "{HEADERS}\n_Static_assert(sizeof(Messages) == {}, \"x\");\n",
        size_of::<Messages>() + 1
    );
    assert!(compile("abi_negative_layout", &wrong_layout).is_err());
}
