//! The response body, as the package's `webclient_read` reads it: a
//! Content-Length or close-delimited body in loops of recvs until the
//! caller's buffer is full, a chunked body one recv at a time within the
//! chunk with `webclient_next_chunk` reading (blocking) the next size line
//! right after a chunk's data, and the first size line that
//! `webclient_handle_response` reads.

use super::conn::AbortSlot;
use super::cstr::{cstrnlen, strtol};
use super::session::Inner;
use crate::host::heap;
use crate::rtt::webclient::{WEBCLIENT_DISCONNECT, WEBCLIENT_TIMEOUT};
use core::ffi::{c_int, c_void};

/// `webclient_next_chunk`'s line buffer.
const CHUNK_LINE: usize = 64;

impl Inner {
    /// The first chunk's size line, read by `webclient_handle_response`
    /// when the head says `Transfer-Encoding: chunked` (`size` is the
    /// header buffer's). False when the line buffer cannot be allocated.
    pub(super) fn start_chunked(&mut self, size: usize) -> bool {
        // The package's rt_uint16_t len = header->size.
        let len = size as u16 as usize;
        let line = heap::rt_malloc(len) as *mut u8;
        self.chunk_sz = 0;
        self.chunk_offset = 0;
        if line.is_null() && len > 0 {
            return false;
        }
        if !line.is_null() {
            // SAFETY: a fresh block of len bytes (zeroed on the host:
            // the package reads it uninitialised after a failed read).
            let l = unsafe {
                core::ptr::write_bytes(line, 0, len);
                core::slice::from_raw_parts_mut(line, len)
            };
            self.read_line(0, len, Some(&mut l[..]));
            self.chunk_sz = strtol(l, 16) as c_int;
            // SAFETY: `line` is our rt_malloc block; `l` is not used again.
            unsafe { heap::rt_free(line as *mut c_void) };
        }
        true
    }

    /// The package's `webclient_next_chunk`.
    fn next_chunk(&mut self, slot: &AbortSlot) -> c_int {
        let mut line = [0u8; CHUNK_LINE];
        let mut length = self.read_line(0, CHUNK_LINE, Some(&mut line));
        if length > 0 {
            if line[..cstrnlen(&line)] == *b"\r" {
                length = self.read_line(0, CHUNK_LINE, Some(&mut line));
                if length <= 0 {
                    self.close_socket(slot);
                    return length;
                }
            }
        } else {
            self.close_socket(slot);
            return length;
        }
        self.chunk_sz = strtol(&line, 16) as c_int;
        self.chunk_offset = 0;
        if self.chunk_sz == 0 {
            // End of chunks.
            self.close_socket(slot);
            self.chunk_sz = -1;
        }
        self.chunk_sz
    }

    /// The package's `webclient_read`.
    pub(super) fn read(&mut self, slot: &AbortSlot, out: &mut [u8]) -> c_int {
        if self.chunk_sz < 0 {
            return 0;
        }
        if self.conn.is_none() {
            return -WEBCLIENT_DISCONNECT;
        }
        if out.is_empty() {
            return 0;
        }
        let mut length = out.len().min(c_int::MAX as usize);
        if self.chunk_sz != 0 {
            let left = (self.chunk_sz - self.chunk_offset).max(0) as usize;
            length = length.min(left);
            let n = self.recv(&mut out[..length]);
            if n <= 0 {
                if self.timed_out() {
                    return -WEBCLIENT_TIMEOUT;
                }
                self.close_socket(slot);
                return 0;
            }
            self.chunk_offset += n;
            if self.chunk_offset >= self.chunk_sz {
                self.next_chunk(slot);
            }
            return n;
        }
        if self.content_length > 0 {
            length = length.min(self.content_remainder);
            if length == 0 {
                return 0;
            }
        }
        let mut total = 0usize;
        while total < length {
            let n = self.recv(&mut out[total..length]);
            if n <= 0 {
                if total > 0 {
                    break;
                }
                if self.timed_out() {
                    crate::host_log_e!("web: receive data timeout.");
                    return -WEBCLIENT_TIMEOUT;
                }
                self.close_socket(slot);
                return 0;
            }
            total += n as usize;
        }
        if self.content_length > 0 {
            self.content_remainder -= total;
        }
        total as c_int
    }
}
