//! Growth of `Vec` and `String` that reports out of memory instead of
//! aborting.
//!
//! `push`, `extend_from_slice` and friends keep a path to
//! `handle_alloc_error` even right after a successful `try_reserve` (the
//! compiler cannot see that the capacity suffices), and that path aborts a
//! board. These helpers reserve fallibly and then write into the spare
//! capacity, so no path to the handler is left; `tests/cross/run.sh` checks
//! that the device library has none.

use alloc::string::String;
use alloc::vec::Vec;

/// The heap could not give the bytes asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory;

/// Append `item`.
pub fn push<T>(v: &mut Vec<T>, item: T) -> Result<(), OutOfMemory> {
    v.try_reserve(1).map_err(|_| OutOfMemory)?;
    let len = v.len();
    match v.spare_capacity_mut().first_mut() {
        Some(slot) => {
            slot.write(item);
        }
        None => return Err(OutOfMemory), // cannot happen after the reserve
    }
    // SAFETY: the first spare slot, at index `len`, was just initialised and
    // lies within the capacity.
    unsafe { v.set_len(len + 1) };
    Ok(())
}

/// Append a copy of `items`.
pub fn extend<T: Copy>(v: &mut Vec<T>, items: &[T]) -> Result<(), OutOfMemory> {
    v.try_reserve(items.len()).map_err(|_| OutOfMemory)?;
    let len = v.len();
    let spare = v.spare_capacity_mut();
    let Some(dst) = spare.get_mut(..items.len()) else {
        return Err(OutOfMemory); // cannot happen after the reserve
    };
    for (slot, &item) in dst.iter_mut().zip(items) {
        slot.write(item);
    }
    // SAFETY: the `items.len()` slots after `len` were just initialised and
    // lie within the capacity.
    unsafe { v.set_len(len + items.len()) };
    Ok(())
}

/// Grow `v` to `new_len` items of `value` (or cut it there).
pub fn resize<T: Copy>(v: &mut Vec<T>, new_len: usize, value: T) -> Result<(), OutOfMemory> {
    if new_len <= v.len() {
        v.truncate(new_len);
        return Ok(());
    }
    let more = new_len - v.len();
    v.try_reserve(more).map_err(|_| OutOfMemory)?;
    let len = v.len();
    let Some(dst) = v.spare_capacity_mut().get_mut(..more) else {
        return Err(OutOfMemory);
    };
    for slot in dst {
        slot.write(value);
    }
    // SAFETY: the `more` slots after `len` were just initialised and lie
    // within the capacity.
    unsafe { v.set_len(len + more) };
    Ok(())
}

/// A copy of `items` in a new vector.
pub fn copy_of<T: Copy>(items: &[T]) -> Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::new();
    extend(&mut v, items)?;
    Ok(v)
}

/// Append `text`.
pub fn push_str(s: &mut String, text: &str) -> Result<(), OutOfMemory> {
    // SAFETY: only whole UTF-8 text (`text`) is appended to the bytes, so
    // they stay UTF-8.
    extend(unsafe { s.as_mut_vec() }, text.as_bytes())
}

/// Append `c`.
pub fn push_char(s: &mut String, c: char) -> Result<(), OutOfMemory> {
    let mut utf8 = [0u8; 4];
    push_str(s, c.encode_utf8(&mut utf8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_like_the_infallible_calls() {
        let mut v = Vec::new();
        push(&mut v, 1u8).unwrap();
        extend(&mut v, &[2, 3]).unwrap();
        resize(&mut v, 5, 9).unwrap();
        assert_eq!(v, [1, 2, 3, 9, 9]);
        resize(&mut v, 2, 0).unwrap();
        assert_eq!(v, [1, 2]);
        assert_eq!(copy_of(&v).unwrap(), v);
        let mut s = String::from("a");
        push_str(&mut s, "bé").unwrap();
        push_char(&mut s, '€').unwrap();
        assert_eq!(s, "abé€");
    }

    #[test]
    fn too_much_is_an_error_not_an_abort() {
        let mut v: Vec<u8> = Vec::new();
        assert_eq!(resize(&mut v, usize::MAX, 0), Err(OutOfMemory));
        assert!(v.is_empty());
    }
}
