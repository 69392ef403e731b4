//! Tool calls written as text (`PKG_AGENT_TOOLS_TEXT`, cargo feature
//! `tools-text`; and the native-mode fallback, `PKG_AGENT_TEXT_CALL_FALLBACK`).
//!
//! The system prompt asks for each call as
//!
//! ```text
//! <tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>
//! ```
//!
//! but small models write calls in other ways too, so an answer is read as a
//! sequence of [`Segment`]s, text and [`Candidate`]s:
//! - [`Kind::Tagged`]: `<tool_call>…</tool_call>` (an unclosed one at the end
//!   counts: a model may stop there). Always a call: its body is read as the
//!   guide for models without function calling says (code fences stripped,
//!   else the outermost `{…}`), and a body that is no call is answered to
//!   the model as an error.
//! - [`Kind::Fenced`]: a code block opened with three backticks, with no
//!   language or `json`. A call only when its body is nothing but call
//!   objects of registered tools (one or several, possibly in `[...]`);
//!   anything else stays text, as the user may have asked for JSON.
//! - [`Kind::Bare`]: a JSON object anywhere in the text. A call only when it
//!   is one of a registered tool.
//!
//! "A call of a registered tool" is an object whose `name` is a registered
//! tool and whose `arguments` (or `parameters`) is an object; the caller
//! decides that (it needs the JSON parser and the registry) through an
//! `is_tool_call(object_text)` judge.
//!
//! [`CallFilter`] takes the answer's fragments as they stream and passes on
//! only the text outside calls (split anywhere): it holds back what may
//! still become a call (a marker's start, an open fence or object) until it
//! is decided. [`segments`] reads a whole answer the same way (the same
//! function decides both, so what is hidden is what runs).
//!
//! Pure: no FFI; the filter's buffer is the only allocation (fallible: out
//! of memory, the held bytes are shown as text).

use crate::base::text::find;
use alloc::vec::Vec;

/// Where a tagged call starts and ends.
pub const OPEN: &[u8] = b"<tool_call>";
pub const CLOSE: &[u8] = b"</tool_call>";
const FENCE: &[u8] = b"```";

/// How a candidate call was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Tagged,
    Fenced,
    Bare,
}

/// Something in an answer that may be a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate<'a> {
    pub kind: Kind,
    /// As written, markers included.
    pub raw: &'a [u8],
    /// Tagged: the call's JSON text (see [`json_of`]); Fenced: the block's
    /// body; Bare: the object.
    pub body: &'a [u8],
    /// Fenced: the block's info string (its language), trimmed.
    pub info: &'a [u8],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    Text(&'a [u8]),
    Candidate(Candidate<'a>),
}

fn trim(mut b: &[u8]) -> &[u8] {
    while let Some((first, rest)) = b.split_first() {
        if !first.is_ascii_whitespace() {
            break;
        }
        b = rest;
    }
    while let Some((last, rest)) = b.split_last() {
        if !last.is_ascii_whitespace() {
            break;
        }
        b = rest;
    }
    b
}

fn is_blank(b: &[u8]) -> bool {
    b.iter().all(u8::is_ascii_whitespace)
}

/// The end (exclusive) of the JSON object that starts at `s[0]` (`{`),
/// strings and escapes respected; `None` while it is not closed.
pub fn object_end(s: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in s.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The segment at the start of `s` and its length. `done`: `s` is all the
/// rest of the answer; otherwise `None` when more bytes are needed to
/// decide (never with `done`, unless `s` is empty).
pub fn next_segment<'a>(s: &'a [u8], done: bool) -> Option<(Segment<'a>, usize)> {
    let first = *s.first()?;
    let pending = |whole: Segment<'a>| done.then_some((whole, s.len()));
    if first == b'<' {
        if let Some(inner) = crate::base::text::strip_prefix(s, OPEN) {
            return match find(inner, CLOSE) {
                Some(end) => {
                    let n = OPEN.len() + end + CLOSE.len();
                    let c = Candidate {
                        kind: Kind::Tagged,
                        raw: s.get(..n).unwrap_or(s),
                        body: json_of(inner.get(..end).unwrap_or(inner)),
                        info: b"",
                    };
                    Some((Segment::Candidate(c), n))
                }
                None => pending(Segment::Candidate(Candidate {
                    kind: Kind::Tagged,
                    raw: s,
                    body: json_of(inner),
                    info: b"",
                })),
            };
        }
        if s.len() < OPEN.len() && OPEN.starts_with(s) {
            return pending(Segment::Text(s));
        }
    } else if first == b'`' {
        if let Some(after) = crate::base::text::strip_prefix(s, FENCE) {
            let Some(eol) = after.iter().position(|&b| b == b'\n') else {
                // The info line is not finished: no body yet.
                return pending(Segment::Candidate(Candidate {
                    kind: Kind::Fenced,
                    raw: s,
                    body: b"",
                    info: trim(after),
                }));
            };
            let (info, body) = after.split_at_checked(eol).unwrap_or((after, &[]));
            let body = body.get(1..).unwrap_or_default();
            return match find(body, FENCE) {
                Some(end) => {
                    let n = FENCE.len() + eol + 1 + end + FENCE.len();
                    let c = Candidate {
                        kind: Kind::Fenced,
                        raw: s.get(..n).unwrap_or(s),
                        body: body.get(..end).unwrap_or(body),
                        info: trim(info),
                    };
                    Some((Segment::Candidate(c), n))
                }
                None => pending(Segment::Candidate(Candidate {
                    kind: Kind::Fenced,
                    raw: s,
                    body,
                    info: trim(info),
                })),
            };
        }
        if s.len() < FENCE.len() && FENCE.starts_with(s) {
            return pending(Segment::Text(s));
        }
    } else if first == b'{' {
        return match object_end(s) {
            Some(n) => {
                let object = s.get(..n).unwrap_or(s);
                let c = Candidate {
                    kind: Kind::Bare,
                    raw: object,
                    body: object,
                    info: b"",
                };
                Some((Segment::Candidate(c), n))
            }
            // Never closed: the brace was text.
            None if done => Some((Segment::Text(s.get(..1).unwrap_or(s)), 1)),
            None => None,
        };
    }
    // Text up to the next byte that may start something.
    let rest = s.get(1..).unwrap_or_default();
    let n = 1 + rest
        .iter()
        .position(|&b| matches!(b, b'<' | b'`' | b'{'))
        .unwrap_or(rest.len());
    Some((Segment::Text(s.get(..n).unwrap_or(s)), n))
}

/// The segments of a whole answer.
pub fn segments(answer: &[u8]) -> Segments<'_> {
    Segments { rest: answer }
}

pub struct Segments<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Segments<'a> {
    type Item = Segment<'a>;
    fn next(&mut self) -> Option<Segment<'a>> {
        let (seg, n) = next_segment(self.rest, true)?;
        self.rest = self.rest.get(n..).unwrap_or_default();
        Some(seg)
    }
}

/// The JSON text of a tagged call's body, as the guide for models without
/// function calling reads it: code fences stripped, then the object that
/// starts at the first `{` (to the last `}` if it never closes); the
/// trimmed body when it has no `{`.
pub fn json_of(body: &[u8]) -> &[u8] {
    let mut b = trim(body);
    if let Some(after) = crate::base::text::strip_prefix(b, FENCE) {
        // Drop the fence line (its language too).
        let eol = after
            .iter()
            .position(|&c| c == b'\n')
            .unwrap_or(after.len());
        b = after.get(eol..).unwrap_or_default();
    }
    if let Some(before) = crate::base::text::strip_suffix(trim(b), FENCE) {
        b = before;
    }
    let b = trim(b);
    let Some(start) = b.iter().position(|&c| c == b'{') else {
        return b;
    };
    let from = b.get(start..).unwrap_or_default();
    match object_end(from) {
        Some(n) => from.get(..n).unwrap_or(from),
        None => {
            let last = from
                .iter()
                .rposition(|&c| c == b'}')
                .map_or(from.len(), |i| i + 1);
            from.get(..last).unwrap_or(from)
        }
    }
}

/// The objects of a fenced block's body, in order; `Err` at the first byte
/// that is neither inside an object nor a separator (blank, `,`, `[`, `]`).
pub fn objects(body: &[u8]) -> Objects<'_> {
    Objects { rest: body }
}

pub struct Objects<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Objects<'a> {
    type Item = Result<&'a [u8], ()>;
    fn next(&mut self) -> Option<Self::Item> {
        let start = self
            .rest
            .iter()
            .position(|b| !(b.is_ascii_whitespace() || matches!(b, b',' | b'[' | b']')))?;
        let from = self.rest.get(start..).unwrap_or_default();
        let end = match from.first() {
            Some(b'{') => object_end(from),
            _ => None,
        };
        match end {
            Some(n) => {
                self.rest = from.get(n..).unwrap_or_default();
                Some(Ok(from.get(..n).unwrap_or(from)))
            }
            None => {
                self.rest = &[];
                Some(Err(()))
            }
        }
    }
}

/// Is a fence with this info string meant for JSON (none, `json`, or a
/// name for tool calls)?
fn json_fence(info: &[u8]) -> bool {
    info.is_empty()
        || [&b"json"[..], b"json5", b"jsonc", b"tool_call", b"tool_code"]
            .iter()
            .any(|l| info.eq_ignore_ascii_case(l))
}

/// Does the fenced block hold nothing but calls of registered tools?
fn fenced_calls(body: &[u8], is_tool_call: &mut dyn FnMut(&[u8]) -> bool) -> bool {
    let mut any = false;
    for object in objects(body) {
        match object {
            Ok(o) if is_tool_call(o) => any = true,
            _ => return false,
        }
    }
    any
}

/// Is `c` a call (or calls)? Tagged ones always are; fenced and bare ones
/// when `is_tool_call` accepts each object.
pub fn is_call(c: &Candidate<'_>, is_tool_call: &mut dyn FnMut(&[u8]) -> bool) -> bool {
    match c.kind {
        Kind::Tagged => true,
        Kind::Fenced => json_fence(c.info) && fenced_calls(c.body, is_tool_call),
        Kind::Bare => is_tool_call(c.body),
    }
}

/// The call texts of a candidate that [`is_call`]: the tagged body, each
/// object of a fenced block, the bare object.
pub fn each_call(c: &Candidate<'_>, out: &mut dyn FnMut(&[u8])) {
    match c.kind {
        Kind::Tagged | Kind::Bare => out(c.body),
        Kind::Fenced => {
            for o in objects(c.body).flatten() {
                out(o);
            }
        }
    }
}

/// The calls of a whole answer, in order, to `out`; how many.
pub fn calls(
    answer: &[u8],
    is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
    out: &mut dyn FnMut(&[u8]),
) -> usize {
    let mut n = 0;
    for seg in segments(answer) {
        if let Segment::Candidate(c) = seg {
            if is_call(&c, is_tool_call) {
                each_call(&c, &mut |call| {
                    n += 1;
                    out(call)
                });
            }
        }
    }
    n
}

/// The one call when the whole answer (blanks aside) is exactly one call
/// of a registered tool, in any of the forms (the native-mode fallback).
pub fn single_call<'a>(
    answer: &'a [u8],
    is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
) -> Option<&'a [u8]> {
    let mut found = None;
    for seg in segments(answer) {
        match seg {
            Segment::Text(t) if is_blank(t) => {}
            Segment::Candidate(c) if found.is_none() => found = Some(one_call(&c, is_tool_call)?),
            _ => return None,
        }
    }
    found
}

/// The single call object of `c`, if it is exactly one call of a
/// registered tool.
fn one_call<'a>(
    c: &Candidate<'a>,
    is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
) -> Option<&'a [u8]> {
    let object = match c.kind {
        Kind::Tagged | Kind::Bare => c.body,
        Kind::Fenced => {
            if !json_fence(c.info) {
                return None;
            }
            let mut all = objects(c.body);
            let first = all.next()?.ok()?;
            if all.next().is_some() {
                return None;
            }
            first
        }
    };
    is_tool_call(object).then_some(object)
}

/// Could `held` (the start of an answer) still turn out to be exactly one
/// call? (The native-mode fallback's filter holds the answer back while it
/// could.)
fn may_be_single_call(held: &[u8], is_tool_call: &mut dyn FnMut(&[u8]) -> bool) -> bool {
    let mut rest = held;
    let mut seen = false;
    while let Some((seg, n)) = next_segment(rest, false) {
        match seg {
            Segment::Text(t) if is_blank(t) => {}
            Segment::Candidate(c) if !seen => {
                if one_call(&c, is_tool_call).is_none() {
                    return false;
                }
                seen = true;
            }
            _ => return false,
        }
        rest = rest.get(n..).unwrap_or_default();
    }
    // Undecided: nothing, or the start of something (a marker, an open
    // fence or object): fine before the one call, a second thing after it.
    rest.is_empty() || !seen
}

/// Hides the calls in a streamed answer.
pub struct CallFilter {
    /// Bytes not decided yet (the start of something that may be a call).
    held: Vec<u8>,
    /// A newline right after a call is part of it.
    after_call: bool,
    /// Hide only an answer that is exactly one call (native fallback),
    /// rather than every call (text mode).
    whole_only: bool,
    /// Whole-only: the answer is known not to be one call; pass through.
    passing: bool,
}

impl Default for CallFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl CallFilter {
    /// A filter for text mode: every call is hidden.
    pub const fn new() -> Self {
        CallFilter {
            held: Vec::new(),
            after_call: false,
            whole_only: false,
            passing: false,
        }
    }

    /// A filter for the native-mode fallback: only an answer that is
    /// exactly one call of a registered tool is hidden.
    pub const fn whole_answer() -> Self {
        CallFilter {
            held: Vec::new(),
            after_call: false,
            whole_only: true,
            passing: false,
        }
    }

    /// Feed one fragment; `out` gets the visible text (possibly in pieces).
    pub fn feed(
        &mut self,
        text: &[u8],
        is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
        out: &mut dyn FnMut(&[u8]),
    ) {
        if self.passing {
            out(text);
            return;
        }
        if crate::base::fallible::extend(&mut self.held, text).is_err() {
            // No memory to hold it: show everything as it is.
            out(&self.held);
            out(text);
            self.held = Vec::new();
            self.passing = self.whole_only;
            return;
        }
        if self.whole_only {
            if !may_be_single_call(&self.held, is_tool_call) {
                out(&self.held);
                self.held = Vec::new();
                self.passing = true;
            }
            return;
        }
        let mut used = 0;
        while let Some((seg, n)) = next_segment(self.held.get(used..).unwrap_or_default(), false) {
            emit(seg, &mut self.after_call, is_tool_call, out);
            used += n;
        }
        crate::base::text::remove_range(&mut self.held, 0, used);
    }

    /// The answer ended: what was held is decided now.
    pub fn finish(
        &mut self,
        is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
        out: &mut dyn FnMut(&[u8]),
    ) {
        if self.whole_only {
            if !self.passing && single_call(&self.held, is_tool_call).is_none() {
                out(&self.held);
            }
        } else {
            for seg in segments(&self.held) {
                emit(seg, &mut self.after_call, is_tool_call, out);
            }
        }
        *self = CallFilter {
            whole_only: self.whole_only,
            ..Self::new()
        };
    }
}

/// Pass on a decided segment unless it is a call.
fn emit(
    seg: Segment<'_>,
    after_call: &mut bool,
    is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
    out: &mut dyn FnMut(&[u8]),
) {
    let shown = match seg {
        Segment::Candidate(c) if is_call(&c, is_tool_call) => {
            *after_call = true;
            return;
        }
        Segment::Candidate(c) => c.raw,
        Segment::Text(t) => t,
    };
    let shown = if core::mem::take(after_call) {
        crate::base::text::strip_prefix(shown, b"\n").unwrap_or(shown)
    } else {
        shown
    };
    if !shown.is_empty() {
        out(shown);
    }
}

/// The answer as the user sees it in text mode: the calls taken out (and
/// the newline right after each). For tests and checks.
pub fn visible(
    answer: &[u8],
    is_tool_call: &mut dyn FnMut(&[u8]) -> bool,
    out: &mut dyn FnMut(&[u8]),
) {
    let mut after_call = false;
    for seg in segments(answer) {
        emit(seg, &mut after_call, is_tool_call, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::String;
    use std::vec::Vec;

    /// A stand-in for the loop's judge: `add` and `mul` are registered.
    fn judge(o: &[u8]) -> bool {
        let s = std::str::from_utf8(o).unwrap_or("");
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        s.starts_with('{')
            && (s.contains("\"name\":\"add\"") || s.contains("\"name\":\"mul\""))
            && (s.contains("\"arguments\":{") || s.contains("\"parameters\":{"))
    }

    fn filtered(pieces: &[&[u8]], whole_only: bool) -> Vec<u8> {
        let mut f = if whole_only {
            CallFilter::whole_answer()
        } else {
            CallFilter::new()
        };
        let mut out = Vec::new();
        for p in pieces {
            f.feed(p, &mut judge, &mut |b| out.extend_from_slice(b));
        }
        f.finish(&mut judge, &mut |b| out.extend_from_slice(b));
        out
    }

    fn found(answer: &[u8]) -> Vec<String> {
        let mut v = Vec::new();
        calls(answer, &mut judge, &mut |c| {
            v.push(String::from_utf8_lossy(c).into_owned())
        });
        v
    }

    /// Every split in two, byte by byte, and whole: the same output, and
    /// the same as the whole-answer reading.
    fn check_filter(whole: &[u8], want: &[u8], whole_only: bool) {
        let name = String::from_utf8_lossy(whole).into_owned();
        assert_eq!(
            String::from_utf8_lossy(&filtered(&[whole], whole_only)),
            String::from_utf8_lossy(want),
            "{name:?}"
        );
        for cut in 0..=whole.len() {
            assert_eq!(
                filtered(&[&whole[..cut], &whole[cut..]], whole_only),
                want,
                "{name:?} cut {cut}"
            );
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(filtered(&bytes, whole_only), want, "{name:?} bytewise");
        if !whole_only {
            let mut v = Vec::new();
            visible(whole, &mut judge, &mut |b| v.extend_from_slice(b));
            assert_eq!(v, want, "{name:?} visible()");
        }
    }

    const ADD: &str = r#"{"name": "add", "arguments": {"a": 1234, "b": 4321}}"#;

    #[test]
    fn tagged_calls_are_hidden_however_the_answer_is_split() {
        let table: &[(&[u8], &[u8])] = &[
            (b"plain text", b"plain text"),
            (b"a <b> c < d", b"a <b> c < d"),
            (
                b"<tool_call>{\"name\":\"add\"}</tool_call>\nThe sum",
                b"The sum",
            ),
            (b"first <tool_call>x</tool_call> then", b"first  then"),
            (b"<tool_call>a</tool_call>\n<tool_call>b</tool_call>\n", b""),
            (b"<tool_cal", b"<tool_cal"),
            (b"x <tool_call>unclosed", b"x "),
            (b"<tool_call>a < b</tool_cal></tool_call>ok", b"ok"),
            (b"<<tool_call>z</tool_call>", b"<"),
        ];
        for (whole, want) in table {
            check_filter(whole, want, false);
        }
    }

    #[test]
    fn fenced_and_bare_calls_of_registered_tools_are_hidden() {
        let fenced = std::format!("I will add them.\n```json\n{ADD}\n```\nDone.");
        check_filter(fenced.as_bytes(), b"I will add them.\nDone.", false);
        let plain_fence = std::format!("```\n{ADD}\n```");
        check_filter(plain_fence.as_bytes(), b"", false);
        let bare = std::format!("{ADD}\nThe sum follows.");
        check_filter(bare.as_bytes(), b"The sum follows.", false);
        let two = std::format!(
            "Two: {ADD} and {}",
            r#"{"name":"mul","parameters":{"a":2,"b":3}}"#
        );
        check_filter(two.as_bytes(), b"Two:  and ", false);
        // Pretty-printed, several calls in one block, an array.
        let pretty = "```json\n{\n  \"name\": \"add\",\n  \"arguments\": {\n    \"a\": 1,\n    \"b\": 2\n  }\n}\n{\"name\": \"mul\", \"arguments\": {\"a\": 3, \"b\": 4}}\n```\n";
        check_filter(pretty.as_bytes(), b"", false);
        let array = std::format!("```json\n[{ADD}, {ADD}]\n```");
        check_filter(array.as_bytes(), b"", false);
    }

    #[test]
    fn json_that_is_not_a_call_stays_text() {
        let table: &[&str] = &[
            // The user asked for JSON.
            "Here it is:\n```json\n{\"name\": \"Ann\", \"age\": 3}\n```\n",
            // A call of a tool that is not registered.
            "```json\n{\"name\": \"reboot\", \"arguments\": {}}\n```",
            "{\"name\": \"reboot\", \"arguments\": {}}",
            // Arguments that are not an object.
            "{\"name\": \"add\", \"arguments\": \"a=1\"}",
            // Another language.
            "```python\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n```",
            // A block with a call and something else.
            "```json\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\nnot json\n```",
            // Braces in prose, unbalanced or not JSON.
            "sets {1, 2} and {x: {y}} and an open { brace",
            "a } stray close and `code` and ``two``",
            // A string with a brace in it.
            "{\"text\": \"}{\"}",
            "unclosed ```json\n{\"name\": \"Ann\"",
        ];
        for t in table {
            check_filter(t.as_bytes(), t.as_bytes(), false);
            assert!(found(t.as_bytes()).is_empty(), "{t:?}");
            check_filter(t.as_bytes(), t.as_bytes(), true);
        }
    }

    #[test]
    fn calls_are_found_in_every_form() {
        assert_eq!(
            found(
                b"I will add.\n<tool_call>{\"a\":1}</tool_call>\n<tool_call>{\"b\":2}</tool_call>"
            ),
            ["{\"a\":1}", "{\"b\":2}"]
        );
        assert!(found(b"no calls").is_empty());
        assert_eq!(found(b"<tool_call>{\"c\":3}"), ["{\"c\":3}"]);
        // A tagged body in a fence, or with words around it.
        let t = std::format!("<tool_call>\n```json\n{ADD}\n```\n</tool_call>");
        assert_eq!(found(t.as_bytes()), [ADD]);
        let t = std::format!("<tool_call>call: {ADD} please</tool_call>");
        assert_eq!(found(t.as_bytes()), [ADD]);
        let t = std::format!("Sure.\n```json\n{ADD}\n```\nand\n{ADD}");
        assert_eq!(found(t.as_bytes()), [ADD, ADD]);
        let t = "```json\n[{\"name\":\"add\",\"arguments\":{}},\n {\"name\":\"mul\",\"arguments\":{}}]\n```";
        assert_eq!(
            found(t.as_bytes()),
            [
                "{\"name\":\"add\",\"arguments\":{}}",
                "{\"name\":\"mul\",\"arguments\":{}}"
            ]
        );
        // An unclosed block at the end (the model stopped there).
        let t = std::format!("```json\n{ADD}\n");
        assert_eq!(found(t.as_bytes()), [ADD]);
    }

    #[test]
    fn json_of_reads_bodies_as_the_guide_says() {
        assert_eq!(json_of(b" {\"a\":1} "), b"{\"a\":1}");
        assert_eq!(json_of(b"```json\n{\"a\":1}\n```"), b"{\"a\":1}");
        assert_eq!(json_of(b"x {\"a\":{\"b\":2}} y"), b"{\"a\":{\"b\":2}}");
        assert_eq!(json_of(b"x {\"a\": 1 y } z"), b"{\"a\": 1 y }");
        assert_eq!(json_of(b"{\"a\": \"unclosed"), b"{\"a\": \"unclosed");
        assert_eq!(json_of(b" not json "), b"not json");
    }

    #[test]
    fn a_whole_answer_that_is_one_call() {
        let yes = [
            String::from(ADD),
            std::format!("\n```json\n{ADD}\n```\n"),
            std::format!("```\n{ADD}\n```"),
            std::format!("<tool_call>{ADD}</tool_call>"),
            std::format!("  {ADD}  \n"),
        ];
        for t in &yes {
            assert_eq!(
                single_call(t.as_bytes(), &mut judge),
                Some(ADD.as_bytes()),
                "{t:?}"
            );
            check_filter(t.as_bytes(), b"", true);
        }
        let no = [
            std::format!("The call: {ADD}"),
            std::format!("{ADD} done"),
            std::format!("{ADD}\n{ADD}"),
            std::format!("```json\n{ADD}\n{ADD}\n```"),
            std::format!("{ADD}<tool_"),
            String::from("<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>"),
            String::from("The sum is 5555."),
            String::from(""),
        ];
        for t in &no {
            assert_eq!(single_call(t.as_bytes(), &mut judge), None, "{t:?}");
            check_filter(t.as_bytes(), t.as_bytes(), true);
        }
    }
}
