//! MSH commands added by this package (exported by `glue/agent_commands.c`):
//! `agent_config` and `agent_status`.

use super::config::{
    agent_config_get, agent_config_set, get_dynamic_agent_api_key, get_dynamic_agent_api_url,
    get_dynamic_agent_model_name,
};
use crate::rtt::log::console_print;
use crate::rtt::*;
use core::ffi::{c_char, c_int, CStr};

/// One console line of `parts` (the abilities' commands write theirs so).
pub(crate) fn line(parts: &[&[u8]]) {
    for p in parts {
        console_print(p);
    }
    console_print(b"\n");
}

/// `n` in decimal, in `buf`.
pub(crate) fn number(n: usize, buf: &mut [u8; 20]) -> &[u8] {
    crate::base::text::decimal(n as u64, buf)
}

/// `agent_config`'s listing (also after a change).
pub(crate) fn show_config() {
    // SAFETY: the getters return NUL-terminated strings that live on.
    unsafe {
        let key = CStr::from_ptr(get_dynamic_agent_api_key()).to_bytes();
        let mut masked = [0u8; 48];
        let n = super::config::masked_key(key, &mut masked);
        let origin: &[u8] = if (*agent_config_get()).is_configured != 0 {
            b"set at run time"
        } else {
            b"PKG_AGENT_* defaults"
        };
        let url = CStr::from_ptr(get_dynamic_agent_api_url());
        line(&[b"url:   ", url.to_bytes()]);
        line(&[
            b"model: ",
            CStr::from_ptr(get_dynamic_agent_model_name()).to_bytes(),
        ]);
        line(&[b"key:   ", masked.get(..n).unwrap_or_default()]);
        line(&[b"from:  ", origin]);
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        {
            let settings = crate::runtime::settings::snapshot();
            let format = crate::runtime::settings::format_for(url, &settings)
                .name()
                .as_bytes();
            let how: &[u8] = if crate::runtime::settings::format_setting().is_some() {
                b" (set at run time)"
            } else {
                b" (PKG_AGENT_API_FORMAT, else from the URL)"
            };
            line(&[b"format: ", format, how]);
        }
    }
    #[cfg(any(feature = "mcp-server", feature = "channel-webnet"))]
    {
        use super::config::tokens::{show, Which};
        for (which, label) in [
            (Which::Web, &b"web token: "[..]),
            (Which::Mcp, &b"mcp token: "[..]),
        ] {
            let mut masked = [0u8; 48];
            if let Some(n) = show(which, &mut masked) {
                line(&[label, masked.get(..n).unwrap_or_default()]);
            }
        }
    }
    super::ability::each(|a| a.show_config, |show| show());
}

/// `agent_config format <name>`: `auto` (PKG_AGENT_API_FORMAT, else the
/// URL decides) or a built-in format's name. False for an unknown name.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
fn set_format(name: &[u8]) -> bool {
    use crate::runtime::settings as provider;
    if name.eq_ignore_ascii_case(b"auto") {
        provider::set_format(None);
        return true;
    }
    match crate::wire::stream::Format::from_name(name) {
        Some(f) => {
            provider::set_format(Some(f));
            true
        }
        None => false,
    }
}

/// The formats `agent_config format` takes besides `auto` and `openai`.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
const FORMATS: &[u8] = match (
    cfg!(feature = "provider-anthropic"),
    cfg!(feature = "provider-ollama"),
) {
    (true, true) => b", anthropic, ollama",
    (true, false) => b", anthropic",
    _ => b", ollama",
};

/// `agent_config` shows the endpoint (key masked); `agent_config key|model|url
/// <value>` sets one at run time (at most 127 bytes); `agent_config tools
/// text|native` chooses how tools are offered (with `tools-text`); with a
/// provider adapter built in, `agent_config format
/// auto|openai|anthropic|ollama` chooses the wire format; `agent_config
/// web-token|mcp-token <token>` sets a network token (16 to 127
/// characters; `none` or `""`: no token, where the build allows it).
pub unsafe fn agent_config(argc: c_int, argv: *mut *mut c_char) -> c_int {
    if argc <= 1 || argv.is_null() {
        show_config();
        return 0;
    }
    // SAFETY: finsh passes argc NUL-terminated strings.
    let arg = |i: c_int| unsafe { *argv.add(i as usize) as *const c_char };
    // SAFETY: argc > 1, so argv[1] is one of finsh's NUL-terminated words.
    if let Some(c) = super::ability::config_word(unsafe { CStr::from_ptr(arg(1)) }.to_bytes()) {
        let mut words: [&[u8]; super::ability::CONFIG_WORDS] = [b""; super::ability::CONFIG_WORDS];
        let given = (argc as usize - 2).min(words.len());
        for (i, w) in words.iter_mut().take(given).enumerate() {
            // SAFETY: i + 2 < argc: finsh's NUL-terminated words.
            *w = unsafe { CStr::from_ptr(arg(i as c_int + 2)) }.to_bytes();
        }
        let more = argc as usize - 2 > words.len();
        return (c.run)(words.get(..given).unwrap_or_default(), more);
    }
    if argc != 3 {
        console_print(b"usage: agent_config [key|model|url <value>] [tools text|native] [format <name>] [web-token|mcp-token <token>]");
        super::ability::each(|a| a.config_word, |c| console_print(c.usage));
        line(&[]);
        return -1;
    }
    // SAFETY: argc is 3 (checked above), so argv[1] and argv[2] are
    // finsh's NUL-terminated words.
    let (what, value) = unsafe { (CStr::from_ptr(arg(1)).to_bytes(), arg(2)) };
    let null = core::ptr::null();
    match what {
        // SAFETY: `value` is `argv[2]`, NUL-terminated and alive for this
        // call; NULLs are skipped; `agent_config_set` only borrows them.
        b"key" => unsafe { agent_config_set(value, null, null) },
        // SAFETY: `value` is `argv[2]`, NUL-terminated and alive for this
        // call; NULLs are skipped; `agent_config_set` only borrows them.
        b"model" => unsafe { agent_config_set(null, value, null) },
        // SAFETY: `value` is `argv[2]`, NUL-terminated and alive for this
        // call; NULLs are skipped; `agent_config_set` only borrows them.
        b"url" => unsafe { agent_config_set(null, null, value) },
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        // SAFETY: `value` is `argv[2]`, NUL-terminated and alive for this call.
        b"format" if !set_format(unsafe { CStr::from_ptr(value) }.to_bytes()) => {
            line(&[b"agent_config format: auto, openai", FORMATS]);
            return -1;
        }
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        b"format" => {}
        #[cfg(any(feature = "mcp-server", feature = "channel-webnet"))]
        b"web-token" | b"mcp-token" => {
            use super::config::tokens::{set_from_console, Which};
            let which = if what == b"web-token" {
                Which::Web
            } else {
                Which::Mcp
            };
            // SAFETY: `value` is `argv[2]`, NUL-terminated and alive for this call.
            let token = unsafe { CStr::from_ptr(value) }.to_bytes();
            // The token itself is never echoed: only the outcome.
            return if set_from_console(which, token) {
                0
            } else {
                -1
            };
        }
        _ => {
            line(&[b"agent_config: set key, model, url, tools, format, web-token or mcp-token"]);
            return -1;
        }
    }
    show_config();
    0
}

/// `agent_status`: whether the loop runs, how many messages it answered, and
/// the heap.
pub unsafe fn agent_status(_argc: c_int, _argv: *mut *mut c_char) -> c_int {
    let (mut total, mut used, mut max_used) = (0, 0, 0);
    // SAFETY: three writable locals.
    unsafe { rt_memory_info(&mut total, &mut used, &mut max_used) };
    let (mut a, mut b, mut c, mut d) = ([0u8; 20], [0u8; 20], [0u8; 20], [0u8; 20]);
    let running: &[u8] = if super::agent_loop::is_running() {
        b"running"
    } else {
        b"stopped"
    };
    line(&[b"agent loop: ", running]);
    line(&[
        b"answered:   ",
        number(super::agent_loop::answered(), &mut a),
    ]);
    line(&[
        b"heap:       used ",
        number(used, &mut b),
        b", max used ",
        number(max_used, &mut c),
        b", total ",
        number(total, &mut d),
    ]);
    // SAFETY: NUL-terminated strings that live on.
    unsafe {
        line(&[
            b"model:      ",
            CStr::from_ptr(get_dynamic_agent_model_name()).to_bytes(),
        ]);
        line(&[
            b"url:        ",
            CStr::from_ptr(get_dynamic_agent_api_url()).to_bytes(),
        ]);
    }
    0
}
