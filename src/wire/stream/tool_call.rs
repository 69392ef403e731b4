//! Tool-call reassembly: `delta.tool_calls[]` fragments into whole calls.
//!
//! A fragment is read whole before it is matched to a call, because the keys
//! that decide which call it belongs to (`index`, `id`) may come after
//! `function` in the object (some servers order keys alphabetically). Its
//! `arguments` text streams into a staging string meanwhile, which is moved
//! (not copied) into a call whose arguments are still empty, and otherwise
//! appended once: reassembly stays linear in the total size.

use super::{append, Caps, StreamError};
use alloc::string::String;
use alloc::vec::Vec;

/// One reassembled tool call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCall {
    index: u32,
    /// Arrival order, so that calls sharing an index keep it when sorted.
    seq: u32,
    id: String,
    kind: String,
    name: String,
    arguments: String,
    too_long: bool,
    id_generated: bool,
}

impl ToolCall {
    /// The `index` the server gave the call (or the fragment's position in
    /// its `tool_calls` array when the server sent none).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The call's id: the server's, or a generated `call_<n>` unique within
    /// the response (see [`ToolCall::id_generated`]).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The `type` the server sent, `"function"` when it sent none.
    pub fn kind(&self) -> &str {
        if self.kind.is_empty() {
            "function"
        } else {
            &self.kind
        }
    }

    /// `function.name`; empty when no fragment carried one.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `function.arguments`: the exact concatenation of the fragments in
    /// arrival order. Empty for a call that is [`too_long`](Self::too_long).
    pub fn arguments(&self) -> &str {
        &self.arguments
    }

    /// The arguments exceeded [`Caps::max_tool_args`]: they were dropped, and
    /// the call must be answered with an error instead of being run.
    pub fn too_long(&self) -> bool {
        self.too_long
    }

    /// The server sent no id for this call; [`ToolCall::id`] was made up.
    pub fn id_generated(&self) -> bool {
        self.id_generated
    }
}

/// What one `tool_calls[]` element carried.
#[derive(Default)]
pub(crate) struct Fragment {
    pub(crate) index: Option<u32>,
    /// Position within its `tool_calls` array.
    pub(crate) pos: u32,
    pub(crate) id: String,
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) args: String,
    /// The arguments alone exceeded the cap (and were dropped).
    pub(crate) args_over: bool,
}

impl Fragment {
    /// Start a new fragment; the strings keep their capacity for reuse.
    pub(crate) fn reset(&mut self, pos: u32) {
        self.index = None;
        self.pos = pos;
        self.id.clear();
        self.kind.clear();
        self.name.clear();
        self.args.clear();
        self.args_over = false;
    }

    /// Append streamed argument text, up to the per-call cap.
    pub(crate) fn push_args(&mut self, text: &str, cap: usize) -> Result<(), StreamError> {
        if self.args_over {
            return Ok(());
        }
        if self.args.len().saturating_add(text.len()) > cap {
            self.args_over = true;
            self.args = String::new();
            return Ok(());
        }
        append(&mut self.args, text)
    }

    /// Nothing that could identify or fill a call (`{}`, or only a type).
    fn is_empty(&self) -> bool {
        self.index.is_none()
            && self.id.is_empty()
            && self.name.is_empty()
            && self.args.is_empty()
            && !self.args_over
    }
}

#[derive(Default)]
pub(crate) struct Calls {
    list: Vec<ToolCall>,
    next_seq: u32,
}

impl Calls {
    pub(crate) fn list(&self) -> &[ToolCall] {
        &self.list
    }

    /// Which call a finished fragment belongs to: `Ok(k)` an existing one,
    /// `Err(index)` a new one at that index.
    fn target(&self, f: &Fragment) -> Result<usize, u32> {
        let id = f.id.as_str();
        // Ids name calls uniquely, whatever index a server sends with them.
        if !id.is_empty() {
            if let Some(k) = self.list.iter().position(|c| c.id == id) {
                return Ok(k);
            }
        }
        let index = f.index.unwrap_or(f.pos);
        // The latest call at this index, unless the fragment names another
        // call (Ollama sends two whole calls both at index 0).
        match self.list.iter().rposition(|c| c.index == index) {
            Some(k) => match self.list.get(k) {
                Some(c) if id.is_empty() || c.id.is_empty() => Ok(k),
                _ => Err(index),
            },
            None => Err(index),
        }
    }

    /// Merge a finished fragment into its call. The fragment's strings may
    /// be swapped out; it is reset before its next use anyway.
    pub(crate) fn apply(&mut self, f: &mut Fragment, caps: &Caps) -> Result<(), StreamError> {
        if f.is_empty() {
            return Ok(());
        }
        let k = match self.target(f) {
            Ok(k) => k,
            Err(index) => self.new_call(index, caps)?,
        };
        self.merge(k, f, caps)
    }

    /// A new, empty call at `index`; its position in the list.
    fn new_call(&mut self, index: u32, caps: &Caps) -> Result<usize, StreamError> {
        if self.list.len() >= caps.max_tool_calls {
            return Err(StreamError::TooManyToolCalls);
        }
        let call = ToolCall {
            index,
            seq: self.next_seq,
            ..ToolCall::default()
        };
        crate::base::fallible::push(&mut self.list, call).map_err(|_| StreamError::OutOfMemory)?;
        self.next_seq = self.next_seq.saturating_add(1);
        Ok(self.list.len().saturating_sub(1))
    }

    /// Whether a call at `index` exists (a format whose fragments name
    /// their call by index alone: Anthropic's `input_json_delta`).
    #[cfg(feature = "provider-anthropic")]
    pub(crate) fn has_index(&self, index: u32) -> bool {
        self.list.iter().any(|c| c.index == index)
    }

    /// A fragment that is a whole call of its own, never merged into an
    /// earlier one (Ollama sends each call whole, several at index 0).
    #[cfg(feature = "provider-ollama")]
    pub(crate) fn add_whole(&mut self, f: &mut Fragment, caps: &Caps) -> Result<(), StreamError> {
        if f.is_empty() {
            return Ok(());
        }
        let k = self.new_call(f.index.unwrap_or(f.pos), caps)?;
        self.merge(k, f, caps)
    }

    /// Merge a finished fragment into call `k`.
    fn merge(&mut self, k: usize, f: &mut Fragment, caps: &Caps) -> Result<(), StreamError> {
        let Some(call) = self.list.get_mut(k) else {
            return Ok(());
        };
        // `id`, `type` and `name` come from whichever fragment has them first.
        for (have, got) in [
            (&mut call.id, &mut f.id),
            (&mut call.kind, &mut f.kind),
            (&mut call.name, &mut f.name),
        ] {
            if have.is_empty() && !got.is_empty() {
                core::mem::swap(have, got);
            }
        }
        let total = call.arguments.len().checked_add(f.args.len());
        if call.too_long || f.args_over || total.is_none_or(|t| t > caps.max_tool_args) {
            call.too_long = true;
            call.arguments = String::new();
        } else if call.arguments.is_empty() {
            core::mem::swap(&mut call.arguments, &mut f.args);
        } else {
            append(&mut call.arguments, &f.args)?;
        }
        f.args.clear();
        Ok(())
    }

    /// The stream is over: put the calls in index order (arrival order for
    /// equal indexes) and give every call without an id, or with the id of
    /// an earlier call (Ollama servers repeat them), a unique one: tool
    /// results are matched to their calls by id.
    pub(crate) fn complete(&mut self) -> Result<(), StreamError> {
        // Insertion sort by (index, seq), which is unique: a response has a
        // handful of calls, and this needs no allocation and only a few
        // bytes of stack (core's sorts put kilobytes of scratch on the stack
        // of a thread that has 10 KB in all on a board).
        // (Pairs through `get_mut`, not indexing: no bounds-check panic path.)
        for i in 1..self.list.len() {
            let mut j = i;
            while let Some([a, b]) = j
                .checked_sub(1)
                .and_then(|before| self.list.get_mut(before..=j))
            {
                if (a.index, a.seq) <= (b.index, b.seq) {
                    break;
                }
                core::mem::swap(a, b);
                j -= 1;
            }
        }
        for k in 0..self.list.len() {
            let earlier = self.list.get(..k).unwrap_or_default();
            let taken =
                |c: &ToolCall| c.id.is_empty() || earlier.iter().any(|before| before.id == c.id);
            if self.list.get(k).is_some_and(taken) {
                let id = self.unique_id(k)?;
                if let Some(call) = self.list.get_mut(k) {
                    call.id = id;
                    call.id_generated = true;
                }
            }
        }
        Ok(())
    }

    /// `call_<n>` for the first `n >= start` that no call uses yet.
    fn unique_id(&self, start: usize) -> Result<String, StreamError> {
        let mut id = String::new();
        // "call_" and the 20 digits of u64::MAX.
        id.try_reserve(25).map_err(|_| StreamError::OutOfMemory)?;
        let mut n = start as u64;
        loop {
            id.clear();
            let mut digits = [0u8; 20];
            // ASCII digits, so always UTF-8.
            let decimal =
                crate::base::text::utf8_prefix(crate::base::text::decimal(n, &mut digits));
            crate::base::fallible::push_str(&mut id, "call_")
                .and_then(|()| crate::base::fallible::push_str(&mut id, decimal))
                .map_err(|_| StreamError::OutOfMemory)?;
            if !self.list.iter().any(|c| c.id == id) {
                return Ok(id);
            }
            // At most `list.len()` ids can be taken, so this ends.
            n = n.saturating_add(1);
        }
    }
}
