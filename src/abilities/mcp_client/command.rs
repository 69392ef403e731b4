//! `agent_config mcp ...`, the console's word for the remote MCP servers
//! (an `agent_config` word of this ability's, see
//! [`crate::runtime::ability::ConfigWord`]).

use super::servers::{self, Refused, MAX_SERVERS, URL_MAX};
use crate::runtime::commands::{line, number};
use core::ffi::c_int;

/// `agent_config mcp list|add <url>|del <url>|reset`: the remote MCP
/// servers of the next agent start (bounded, on the heap once changed: see
/// `mcp_client::servers`).
pub fn mcp_command(words: &[&[u8]], extra: bool) -> c_int {
    let what = words.first().copied();
    let url = words.get(1).copied();
    let usage = || {
        line(&[b"usage: agent_config mcp [list | add <url> | del <url> | reset]"]);
        -1
    };
    if extra {
        return usage();
    }
    let result = match (what, url) {
        (None | Some(b"list"), None) => Ok(()),
        (Some(b"add"), Some(url)) => servers::add(url),
        (Some(b"del"), Some(url)) => servers::del(url),
        (Some(b"reset"), None) => {
            servers::reset();
            Ok(())
        }
        _ => return usage(),
    };
    if let Err(why) = result {
        let mut a = [0u8; 20];
        let mut b = [0u8; 20];
        match why {
            Refused::BadUrl => line(&[
                b"agent_config mcp: a URL is 1 to ",
                number(URL_MAX, &mut a),
                b" bytes without blanks",
            ]),
            Refused::Full => line(&[
                b"agent_config mcp: the list is full (",
                number(MAX_SERVERS, &mut b),
                b" servers)",
            ]),
            Refused::Duplicate => line(&[b"agent_config mcp: already in the list"]),
            Refused::NotFound => line(&[b"agent_config mcp: not in the list"]),
            Refused::OutOfMemory => line(&[b"agent_config mcp: out of memory"]),
        }
        return -1;
    }
    let mut any = false;
    for i in 0..MAX_SERVERS {
        let Some(url) = servers::get(i) else { break };
        let mut n = [0u8; 20];
        line(&[b"mcp ", number(i + 1, &mut n), b": ", url.as_bytes()]);
        any = true;
    }
    if !any {
        line(&[b"mcp: no remote MCP servers"]);
    }
    if what.is_some_and(|w| w != b"list") {
        line(&[b"(from the next agent start)"]);
    }
    0
}
