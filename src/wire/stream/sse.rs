//! Server-sent events framing, incremental.
//!
//! Lines end in `\n`, `\r\n` or a lone `\r` (the SSE rule), a line may be cut
//! anywhere by the network, and no line is ever held: a `data:` value is
//! handed on piece by piece as it arrives. The only bytes kept are a field
//! name or an `event:` value, and only up to 5 bytes of them, which is all it
//! takes to recognise `data`, `event` and `error`.

use super::tokenizer::find2;
use super::Stop;

/// What the framer reports. One event is: any number of `data_line` each
/// followed by its value in `data` pieces, maybe `error_event`, then
/// `dispatch`.
pub(crate) trait Events {
    /// A `data` field starts; its value follows.
    fn data_line(&mut self) -> Result<(), Stop>;
    /// A piece of the current `data` field's value (never holds a line end).
    fn data(&mut self, bytes: &[u8]) -> Result<(), Stop>;
    /// The event's type is `error`.
    fn error_event(&mut self);
    /// A blank line: the event is complete.
    fn dispatch(&mut self) -> Result<(), Stop>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    /// `id`, `retry`, comments and unknown fields: read and dropped.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// Nothing of the line read yet.
    Start,
    /// Reading the field name.
    Name,
    /// Just after the colon: one space may follow.
    Space(Field),
    /// Reading the value.
    Value(Field),
}

const BUF: usize = 5;

pub(crate) struct Sse {
    line: Line,
    /// The last line ended in `\r`: a `\n` right after it ends nothing.
    skip_lf: bool,
    /// The field name, then (for `event`) the value; too long for `BUF` is
    /// neither of the names we look for.
    buf: [u8; BUF],
    len: u8,
    long: bool,
}

impl Sse {
    pub(crate) const fn new() -> Self {
        Sse {
            line: Line::Start,
            skip_lf: false,
            buf: [0; BUF],
            len: 0,
            long: false,
        }
    }

    pub(crate) fn feed<E: Events>(&mut self, input: &[u8], ev: &mut E) -> Result<(), Stop> {
        let mut i = 0usize;
        while let Some(&b) = input.get(i) {
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    i += 1;
                    continue;
                }
            }
            match self.line {
                Line::Start => match b {
                    b'\n' | b'\r' => {
                        self.line_end(b);
                        i += 1;
                        ev.dispatch()?;
                    }
                    b':' => {
                        // A comment (keep-alive, `: OPENROUTER PROCESSING`).
                        self.line = Line::Value(Field::Other);
                        i += 1;
                    }
                    _ => {
                        self.clear();
                        self.line = Line::Name;
                    }
                },
                Line::Name => match b {
                    b':' => {
                        self.line = Line::Space(self.field());
                        i += 1;
                    }
                    b'\n' | b'\r' => {
                        // A field without a colon has an empty value.
                        let field = self.field();
                        self.value_start(field, ev)?;
                        self.value_end(field, ev);
                        self.line_end(b);
                        i += 1;
                    }
                    _ => {
                        self.push(b);
                        i += 1;
                    }
                },
                Line::Space(field) => {
                    if b == b' ' {
                        i += 1;
                    }
                    self.value_start(field, ev)?;
                }
                Line::Value(field) => {
                    let rest = input.get(i..).unwrap_or_default();
                    let eol = find2(rest, b'\n', b'\r');
                    let run = match eol {
                        Some(n) => rest.get(..n).unwrap_or_default(),
                        None => rest,
                    };
                    match field {
                        Field::Data if !run.is_empty() => ev.data(run)?,
                        Field::Event => run.iter().for_each(|&c| self.push(c)),
                        _ => {}
                    }
                    let Some(n) = eol else { return Ok(()) };
                    let end = rest.get(n).copied().unwrap_or(b'\n');
                    i = i.saturating_add(n).saturating_add(1);
                    self.value_end(field, ev);
                    self.line_end(end);
                }
            }
        }
        Ok(())
    }

    /// The stream ended: a last line without its line end still counts.
    pub(crate) fn end_of_stream<E: Events>(&mut self, ev: &mut E) -> Result<(), Stop> {
        let field = match self.line {
            Line::Start => return Ok(()),
            Line::Name => {
                let field = self.field();
                self.value_start(field, ev)?;
                field
            }
            Line::Space(field) => {
                self.value_start(field, ev)?;
                field
            }
            Line::Value(field) => field,
        };
        self.value_end(field, ev);
        self.line = Line::Start;
        Ok(())
    }

    fn clear(&mut self) {
        self.len = 0;
        self.long = false;
    }

    fn push(&mut self, b: u8) {
        match self.buf.get_mut(usize::from(self.len)) {
            Some(slot) if !self.long => {
                *slot = b;
                self.len += 1;
            }
            _ => self.long = true,
        }
    }

    fn is(&self, name: &[u8]) -> bool {
        !self.long && self.buf.get(..usize::from(self.len)) == Some(name)
    }

    fn field(&self) -> Field {
        if self.is(b"data") {
            Field::Data
        } else if self.is(b"event") {
            Field::Event
        } else {
            Field::Other
        }
    }

    fn value_start<E: Events>(&mut self, field: Field, ev: &mut E) -> Result<(), Stop> {
        self.line = Line::Value(field);
        match field {
            Field::Data => ev.data_line(),
            Field::Event => {
                self.clear();
                Ok(())
            }
            Field::Other => Ok(()),
        }
    }

    fn value_end<E: Events>(&mut self, field: Field, ev: &mut E) {
        if field == Field::Event && self.is(b"error") {
            ev.error_event();
        }
    }

    fn line_end(&mut self, b: u8) {
        self.line = Line::Start;
        self.skip_lf = b == b'\r';
    }
}
