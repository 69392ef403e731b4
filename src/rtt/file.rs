//! The board's file API, for multimodal messages (feature `multimodal`).
//!
//! RT-Thread's DFS offers the POSIX calls under their own names
//! (`components/dfs/dfs_v1|dfs_v2/src/dfs_posix.c` of RT-Thread 5.3):
//! `int open(const char *file, int flags, ...)`, `ssize_t read(int fd, void
//! *buf, size_t len)`, `int close(int fd)`, declared for C code by
//! `<fcntl.h>`/`<unistd.h>`. On the host they are the C library's own. A
//! file's size comes from `stat()` through the C glue
//! (`agent_glue_file_size`), because `struct stat` is the board's C
//! library's. `O_RDONLY` is 0 in newlib, DFS and glibc alike.

use core::ffi::{c_char, c_int, c_void, CStr};

const O_RDONLY: c_int = 0;

/// `agent_glue_file_size`'s results (`glue/agent_glue.h`).
const AGENT_FILE_MISSING: c_int = -1;
const AGENT_FILE_NOT_REGULAR: c_int = -2;

extern "C" {
    fn open(file: *const c_char, flags: c_int, ...) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, len: usize) -> isize;
    fn close(fd: c_int) -> c_int;
    fn agent_glue_file_size(path: *const c_char, size: *mut u32) -> c_int;
}

/// Why a file could not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileError {
    /// No such file.
    Missing,
    /// A directory or a device, not a file.
    NotRegular,
    /// It exists but could not be read (permissions, I/O error, ...).
    Unreadable,
}

impl FileError {
    /// The reason, for a reply.
    pub fn text(self) -> &'static str {
        match self {
            FileError::Missing => "no such file",
            FileError::NotRegular => "not a regular file",
            FileError::Unreadable => "it cannot be read",
        }
    }
}

/// The size of the regular file at `path` (files of 4 GB or more read as
/// `u32::MAX`, which any cap refuses).
pub fn size(path: &CStr) -> Result<u32, FileError> {
    let mut n: u32 = 0;
    // SAFETY: `path` is NUL-terminated; `n` is a valid place for the size.
    match unsafe { agent_glue_file_size(path.as_ptr(), &mut n) } {
        0 => Ok(n),
        AGENT_FILE_MISSING => Err(FileError::Missing),
        AGENT_FILE_NOT_REGULAR => Err(FileError::NotRegular),
        _ => Err(FileError::Unreadable),
    }
}

/// A file open for reading, closed when dropped.
pub struct File(c_int);

impl File {
    pub fn open(path: &CStr) -> Result<File, FileError> {
        // SAFETY: `path` is NUL-terminated; O_RDONLY takes no mode argument.
        let fd = unsafe { open(path.as_ptr(), O_RDONLY) };
        if fd < 0 {
            // open() failing after stat() succeeded, or without a stat
            // first: tell the two apart with the stat.
            return Err(match size(path) {
                Err(e) => e,
                Ok(_) => FileError::Unreadable,
            });
        }
        Ok(File(fd))
    }

    /// Read into `buf`: the byte count, 0 at the end, or an error.
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize, FileError> {
        // SAFETY: an open descriptor; `buf` is valid for `buf.len()` bytes.
        let n = unsafe { read(self.0, buf.as_mut_ptr() as *mut c_void, buf.len()) };
        if n < 0 {
            Err(FileError::Unreadable)
        } else {
            Ok(n as usize)
        }
    }

    /// Fill `buf` completely unless the file ends first: the count read.
    pub fn read_full(&mut self, buf: &mut [u8]) -> Result<usize, FileError> {
        let mut got = 0;
        while let Some(rest) = buf.get_mut(got..).filter(|r| !r.is_empty()) {
            match self.read(rest)? {
                0 => break,
                n => got += n,
            }
        }
        Ok(got)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: the descriptor is open and closed exactly once, here.
        unsafe { close(self.0) };
    }
}
