//! The sub-agent profiles file (`PKG_AGENT_SUBAGENTS`,
//! `PKG_AGENT_PROFILES_FILE`): a small text file of sections, one per
//! profile. Pure: the runtime reads the file.
//!
//! ```text
//! # a comment
//! [researcher]
//! description = Looks facts up and answers in one paragraph.
//! system = You are a careful researcher. Answer in one paragraph.
//! model = qwen2.5-7b
//! url = http://192.168.1.20:8080/v1/chat/completions
//! key = sk-...
//! tools = add, mul
//! ```
//!
//! `system` is required; the others may be left out (the agent's endpoint,
//! model and key; no tools). Values run to the end of their line.

/// One profile as the file gives it (borrowed from the text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileText<'a> {
    pub name: &'a [u8],
    pub description: &'a [u8],
    pub system: &'a [u8],
    pub url: &'a [u8],
    pub key: &'a [u8],
    pub model: &'a [u8],
    /// Tool names, separated by commas.
    pub tools: &'a [u8],
}

/// Why the file was refused, and on which line (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadFile {
    /// A line that is neither `[name]`, `key = value`, a comment nor blank.
    Line(usize),
    /// A `key = value` before the first `[name]`.
    NoSection(usize),
    /// A key other than description, system, model, url, key, tools.
    UnknownKey(usize),
    /// A section name that is empty, too long (64 bytes) or not
    /// `[A-Za-z0-9_-]` (a tool's name).
    BadName(usize),
    /// A profile without `system` (its section's line).
    NoSystem(usize),
}

impl BadFile {
    /// The reason and its line.
    pub fn text(self) -> (&'static str, usize) {
        match self {
            BadFile::Line(n) => ("a line is not [name], key = value or a # comment", n),
            BadFile::NoSection(n) => ("a key = value before the first [name]", n),
            BadFile::UnknownKey(n) => (
                "an unknown key (description, system, model, url, key, tools)",
                n,
            ),
            BadFile::BadName(n) => ("a profile name is not 1-64 of A-Z a-z 0-9 _ -", n),
            BadFile::NoSystem(n) => ("a profile has no system prompt", n),
        }
    }
}

fn trim(mut b: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = b {
        if first.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = b {
        if last.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

/// Whether `name` may name a profile (and so a tool).
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// Call `each` for every profile of `text`, in order; the first problem
/// stops it.
pub fn parse<'a>(
    text: &'a [u8],
    mut each: impl FnMut(ProfileText<'a>) -> bool,
) -> Result<usize, BadFile> {
    let mut current: Option<(ProfileText<'a>, usize)> = None;
    let mut count = 0;
    let mut finish = |p: Option<(ProfileText<'a>, usize)>, count: &mut usize| match p {
        Some((p, line)) if p.system.is_empty() => Err(BadFile::NoSystem(line)),
        Some((p, _)) => {
            *count += 1;
            each(p);
            Ok(())
        }
        None => Ok(()),
    };
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let line = trim(raw);
        if line.is_empty() || line.first() == Some(&b'#') {
            continue;
        }
        if let (Some(b'['), Some(b']')) = (line.first(), line.last()) {
            finish(current.take(), &mut count)?;
            let name = trim(line.get(1..line.len() - 1).unwrap_or_default());
            if !valid_name(name) {
                return Err(BadFile::BadName(n));
            }
            current = Some((
                ProfileText {
                    name,
                    ..ProfileText::default()
                },
                n,
            ));
            continue;
        }
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            return Err(BadFile::Line(n));
        };
        let key = trim(line.get(..eq).unwrap_or_default());
        let value = trim(line.get(eq + 1..).unwrap_or_default());
        let Some((profile, _)) = current.as_mut() else {
            return Err(BadFile::NoSection(n));
        };
        let slot = match key {
            b"description" => &mut profile.description,
            b"system" => &mut profile.system,
            b"model" => &mut profile.model,
            b"url" => &mut profile.url,
            b"key" => &mut profile.key,
            b"tools" => &mut profile.tools,
            _ => return Err(BadFile::UnknownKey(n)),
        };
        *slot = value;
    }
    finish(current.take(), &mut count)?;
    Ok(count)
}

/// The tool names of a `tools` value, trimmed, empty ones left out.
pub fn tool_names(tools: &[u8]) -> impl Iterator<Item = &[u8]> {
    tools
        .split(|&b| b == b',')
        .map(trim)
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn all(text: &str) -> Result<Vec<ProfileText<'_>>, BadFile> {
        let mut out = Vec::new();
        parse(text.as_bytes(), |p| {
            out.push(p);
            true
        })?;
        Ok(out)
    }

    #[test]
    fn sections_keys_and_defaults() {
        let got = all("# profiles\n\n[researcher]\ndescription = Looks up.\nsystem = Be careful = precise.\ntools = add , mul,,\n[calc]\n  system=You add.  \n").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].name, b"researcher");
        assert_eq!(got[0].system, b"Be careful = precise.");
        assert_eq!(got[0].description, b"Looks up.");
        assert_eq!(
            tool_names(got[0].tools).collect::<Vec<_>>(),
            [&b"add"[..], b"mul"]
        );
        assert_eq!(got[1].system, b"You add.");
        assert_eq!(
            (got[1].url, got[1].model, got[1].key, got[1].tools),
            (&b""[..], &b""[..], &b""[..], &b""[..])
        );
        assert_eq!(all(""), Ok(Vec::new()));
    }

    #[test]
    fn bad_files_name_their_line() {
        let table: &[(&str, BadFile)] = &[
            ("system = x\n", BadFile::NoSection(1)),
            ("[a]\nsystem = x\nwho = me\n", BadFile::UnknownKey(3)),
            ("[a]\njust words\n", BadFile::Line(2)),
            ("[a b]\nsystem = x\n", BadFile::BadName(1)),
            ("[]\n", BadFile::BadName(1)),
            (
                "[a]\ndescription = d\n[b]\nsystem = x\n",
                BadFile::NoSystem(1),
            ),
            ("[a]\nsystem = x\n[b]\n", BadFile::NoSystem(3)),
        ];
        for (text, want) in table {
            assert_eq!(all(text), Err(*want), "{text:?}");
        }
    }
}
