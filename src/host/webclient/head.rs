//! The HTTP head in the session's `header_sz` buffer, quirks included:
//! `webclient_header_fields_add`'s arithmetic (a cut line still counted
//! in), the request head the package's `webclient_send_header` builds, the
//! NUL-separated line walk of `webclient_header_fields_get`, and
//! `webclient_handle_response`: the response head read line by line with
//! `webclient_read_line`'s 1-byte recvs, cut at the buffer's end, then the
//! status (`strtol` at offset 8), `Content-Length` (`atoi`) and
//! `Transfer-Encoding`.

use super::conn::AbortSlot;
use super::cstr::{atoi, contains, cstr_bytes, cstrnlen, heap_cstr, put, put_parts, strtol};
use super::session::Inner;
use crate::host::heap;
use crate::rtt::webclient::{WEBCLIENT_ERROR, WEBCLIENT_NOBUFFER, WEBCLIENT_NOMEM, WEBCLIENT_OK};
use core::ffi::{c_int, c_void};

const USER_AGENT: &[u8] = b"User-Agent: RT-Thread HTTP Agent\r\n";

impl Inner {
    /// The package's `webclient_read_line`: bytes up to (not including) a
    /// CRLF's LF, at most `size`; the CR is kept. The recv's rc (<= 0) when
    /// it fails. Neither NUL-terminated nor checked for a cut line.
    pub(super) fn read_line(&mut self, at: usize, size: usize, line: Option<&mut [u8]>) -> c_int {
        let mut count = 0usize;
        let mut last = 0u8;
        let mut line = line;
        while count < size {
            let mut ch = [0u8; 1];
            let rc = self.recv(&mut ch);
            if rc <= 0 {
                return rc;
            }
            if ch[0] == b'\n' && last == b'\r' {
                break;
            }
            match line.as_deref_mut() {
                Some(l) => l[count] = ch[0],
                None => self.buf()[at + count] = ch[0],
            }
            count += 1;
            last = ch[0];
        }
        count as c_int
    }

    /// `webclient_header_fields_add` after formatting: the package's
    /// arithmetic on `header->length`, the refusal included. The line is
    /// the concatenation of `parts` (no copy is made to join them).
    pub(super) fn fields_add(&mut self, parts: &[&[u8]]) -> c_int {
        let (length, size) = {
            let h = self.hdr();
            (h.length, h.size)
        };
        // The package formats into `size - length` bytes (a size_t that
        // wraps once `length` has run past `size`, writing beyond the
        // buffer); the host writes nothing then.
        let room = size.saturating_sub(length);
        let n = put_parts(
            &mut self.buf()[length.min(size)..length.min(size) + room],
            parts,
        );
        let h = self.hdr();
        h.length += n;
        if h.length >= h.size {
            crate::host_log_e!("web: not enough header buffer size({})!", h.size);
            return -WEBCLIENT_ERROR;
        }
        n as c_int
    }

    /// Does the head built so far (up to its first NUL) contain `needle`?
    fn head_contains(&mut self, needle: &[u8]) -> bool {
        let buf = self.buf();
        let n = cstrnlen(buf);
        contains(&buf[..n], needle)
    }

    /// The package's `webclient_send_header` for GET and POST. It builds
    /// the head in the header buffer itself: the only heap block it takes is
    /// the package's own copy of the caller's lines (checked).
    pub(super) fn send_header(&mut self, slot: &AbortSlot, post: bool) -> c_int {
        // Separate heap blocks of the session, unchanged during this call.
        let host = cstr_bytes(self.host);
        let url: &[u8] = if self.req_url.is_null() {
            b"/"
        } else {
            cstr_bytes(self.req_url)
        };
        if self.hdr().length == 0 && !post {
            // The default head of a plain GET.
            if self.fields_add(&[b"GET ", url, b" HTTP/1.1\r\n"]) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            if self.fields_add(&[b"Host: ", host, b"\r\n"]) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            if self.fields_add(&[b"User-Agent: RT-Thread HTTP Agent\r\n\r\n"]) < 0 {
                return -WEBCLIENT_NOMEM;
            }
        } else {
            if !self.buf().starts_with(b"HTTP/1.") {
                // A copy of the caller's lines, then the request line
                // spliced in front of them.
                let lines_len = cstrnlen(self.buf());
                let copy = heap_cstr(&self.buf()[..lines_len]);
                if copy.is_null() {
                    crate::host_log_e!("web: no memory for header buffer!");
                    return -WEBCLIENT_NOMEM;
                }
                let method: &[u8] = if post { b"POST " } else { b"GET " };
                let n = put_parts(
                    self.buf(),
                    &[method, url, b" HTTP/1.1\r\n", cstr_bytes(copy)],
                );
                self.hdr().length = n;
                // SAFETY: `copy` is heap_cstr's rt_malloc block; its bytes
                // were copied into the buffer and nothing borrows it now.
                unsafe { heap::rt_free(copy as *mut c_void) };
            }
            if !self.head_contains(b"Host:") && self.fields_add(&[b"Host: ", host, b"\r\n"]) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            if !self.head_contains(b"User-Agent:") && self.fields_add(&[USER_AGENT]) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            if !self.head_contains(b"Accept:") && self.fields_add(&[b"Accept: */*\r\n"]) < 0 {
                return -WEBCLIENT_NOMEM;
            }
            let (length, size) = (self.hdr().length, self.hdr().size);
            if length <= size {
                put(&mut self.buf()[length..], b"\r\n");
            }
            self.hdr().length += 2;
            if self.hdr().length > size {
                crate::host_log_e!(
                    "web: send header failed, not enough header buffer size({})!",
                    size
                );
                return -WEBCLIENT_NOBUFFER;
            }
        }
        let (buffer, length) = {
            let h = self.hdr();
            (h.buffer as *const u8, h.length.min(h.size))
        };
        // SAFETY: the header buffer is the session's own heap block of
        // `size` bytes (`length` is within it); `write` uses only the
        // connection and errno, never the header, so the bytes stay valid
        // and unchanged while borrowed.
        let head = unsafe { core::slice::from_raw_parts(buffer, length) };
        // The package ignores what this write returns.
        self.write(slot, head);
        WEBCLIENT_OK
    }

    /// The package's `webclient_header_fields_get`, walk and all: the first
    /// line (of the NUL-separated lines) that *starts* with `name` in any
    /// case; its value after the first ':' and blanks.
    pub(super) fn field(&mut self, name: &[u8]) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        let length = self.hdr().length;
        let buf: &[u8] = self.buf();
        let mut at = 0usize;
        let mut seen = 0usize;
        while seen < length && at < buf.len() {
            let line = &buf[at..at + cstrnlen(&buf[at..])];
            if line.len() >= name.len() && line[..name.len()].eq_ignore_ascii_case(name) {
                if let Some(colon) = line.iter().position(|&b| b == b':') {
                    let mut v = colon + 1;
                    while v < line.len() && matches!(line[v], b' ' | b'\t') {
                        v += 1;
                    }
                    return Some(at + v);
                }
            }
            if line.is_empty() {
                break;
            }
            at += line.len() + 1;
            // The package adds the length of the *next* line here.
            if at < buf.len() {
                seen += cstrnlen(&buf[at..]) + 1;
            } else {
                break;
            }
        }
        None
    }

    /// Where a field's value lies in the header buffer: (start, length).
    pub(super) fn field_span(&mut self, name: &[u8]) -> Option<(usize, usize)> {
        let at = self.field(name)?;
        Some((at, cstrnlen(&self.buf()[at..])))
    }

    /// The package's `webclient_handle_response`.
    pub(super) fn handle_response(&mut self) -> c_int {
        let size = self.hdr().size;
        self.buf().fill(0);
        self.hdr().length = 0;
        let mut rc;
        loop {
            let length = self.hdr().length;
            // size - length - 1 in size_t: never wraps here (length < size).
            rc = self.read_line(length, size - length - 1, None);
            if rc <= 0 {
                break;
            }
            let n = rc as usize;
            if n == 1 && self.buf()[length] == b'\r' {
                self.buf()[length] = 0;
                break;
            }
            self.buf()[length + n - 1] = 0;
            self.hdr().length += n;
            if self.hdr().length >= size {
                // Unreachable in the package too: read_line never returns
                // more than size - length - 1.
                return -WEBCLIENT_NOMEM;
            }
        }
        // The status line, copied (the package's web_strdup).
        let first_len = cstrnlen(self.buf());
        let copy = heap_cstr(&self.buf()[..first_len]);
        if copy.is_null() {
            return -WEBCLIENT_NOMEM;
        }
        let first = cstr_bytes(copy);
        if contains(first, b"HTTP/1.") {
            // From the line's start + 8 (the package reads past a shorter
            // line; the host stops at its end).
            let mut p = first.get(8..).unwrap_or(b"");
            while let [b' ' | b'\t', rest @ ..] = p {
                p = rest;
            }
            self.resp_status = strtol(p, 10) as c_int;
        }
        // SAFETY: `copy` is heap_cstr's rt_malloc block; `first` and `p`, which
        // borrow it, are not used after this.
        unsafe { heap::rt_free(copy as *mut c_void) };
        if let Some((at, n)) = self.field_span(b"Content-Length") {
            self.content_length = atoi(&self.buf()[at..at + n]);
        }
        self.content_remainder = if self.content_length != 0 {
            // (size_t) of an int, as on a 32-bit board.
            self.content_length as u32 as usize
        } else {
            0xFFFF_FFFF
        };
        let chunked = self
            .field_span(b"Transfer-Encoding")
            .is_some_and(|(at, n)| &self.buf()[at..at + n] == b"chunked");
        // The package reads the first size line into an unchecked
        // rt_malloc; the host fails the response instead when that block
        // is refused (reading the chunked framing as body would hand the
        // caller garbage).
        if chunked && !self.start_chunked(size) {
            return -WEBCLIENT_NOMEM;
        }
        if rc < 0 {
            return rc;
        }
        self.resp_status
    }
}
