//! Reads what a set of C headers declares out of the compiler's own output:
//! `gcc -E -dD` of a translation unit that includes them, whose line markers
//! say which file each line and each `#define` came from. Only the lines of
//! the package's own header files are read; every macro in them is already
//! expanded by the compiler (array sizes, attributes).
//!
//! The reader knows the C of headers, not all of C: top-level declarations
//! (prototypes, `extern` objects, typedefs, struct/union/enum definitions)
//! and inline function definitions. What it cannot read is an error with
//! the file and line, never a silent omission.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A place in a header.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loc {
    pub file: PathBuf,
    pub line: usize,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tok {
    pub text: String,
    pub loc: Loc,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

fn is_ident(s: &str) -> bool {
    s.chars().next().is_some_and(is_ident_start)
        && s.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}

const PUNCT3: [&str; 3] = ["...", "<<=", ">>="];
const PUNCT2: [&str; 19] = [
    "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=", "/=", "%=", "+=", "-=",
    "&=", "^=", "|=",
];

/// C tokens of one line (string and character literals kept whole).
pub fn tokenize(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c == '"' || c == '\'' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
        } else if is_ident_start(c) {
            while i < chars.len() && (chars[i] == '_' || chars[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            // A prefixed literal: L"x", u8"x".
            if i < chars.len() && (chars[i] == '"' || chars[i] == '\'') {
                let q = chars[i];
                i += 1;
                while i < chars.len() && chars[i] != q {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(chars.len());
            }
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            // A preprocessing number: digits, letters, '.', and signs after e/p.
            i += 1;
            while i < chars.len() {
                let d = chars[i];
                let sign = (d == '+' || d == '-') && matches!(chars[i - 1], 'e' | 'E' | 'p' | 'P');
                if d == '_' || d == '.' || d.is_ascii_alphanumeric() || sign {
                    i += 1;
                } else {
                    break;
                }
            }
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let len = if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                1
            };
            i += len;
        }
        out.push(chars[start..i].iter().collect());
    }
    out
}

/// Token text with one space between tokens: the same text for the same
/// tokens, however they were spaced or wrapped.
pub fn normalize(text: &str) -> String {
    tokenize(text).join(" ")
}

/// Everything a C comment is, removed (strings left alone).
pub fn strip_comments(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '"' || b[i] == '\'' {
            let q = b[i];
            out.push(q);
            i += 1;
            while i < b.len() && b[i] != q && b[i] != '\n' {
                if b[i] == '\\' && i + 1 < b.len() {
                    out.push(b[i]);
                    i += 1;
                }
                out.push(b[i]);
                i += 1;
            }
            if i < b.len() {
                out.push(b[i]);
                i += 1;
            }
        } else if b[i] == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                if b[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if b[i] == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// The preprocessor directives of a header file (comments removed,
/// continuation lines joined), with their line numbers.
pub fn directives(text: &str) -> Vec<(usize, String)> {
    let text = strip_comments(&text.replace("\\\r\n", "").replace("\\\n", ""));
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim();
            t.strip_prefix('#')
                .map(|d| (i + 1, normalize(d.trim_start())))
        })
        .collect()
}

/// The include guard of a header: its first directive is `#ifndef G` and
/// its second `#define G` with no value. Include guards are not part of an
/// API (two headers may guard the same declarations under different names).
pub fn include_guard(text: &str) -> Option<String> {
    let d = directives(text);
    let first = d.first()?.1.strip_prefix("ifndef ")?.trim().to_string();
    let second = d.get(1)?.1.clone();
    (second == format!("define {first}")).then_some(first)
}

/// Every identifier a header's conditionals test (`#if`, `#ifdef`,
/// `#ifndef`, `#elif`), `defined` itself left out.
pub fn tested_identifiers(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, d) in directives(text) {
        let toks = tokenize(&d);
        let Some(kw) = toks.first() else { continue };
        if !matches!(kw.as_str(), "if" | "ifdef" | "ifndef" | "elif") {
            continue;
        }
        for t in &toks[1..] {
            if is_ident(t) && t != "defined" {
                out.insert(t.clone());
            }
        }
    }
    out
}

/// A macro definition as `gcc -dD` prints it.
#[derive(Clone, Debug)]
pub struct Macro {
    pub loc: Loc,
    /// `(a, b)` for a function-like macro, "" for an object-like one.
    pub params: String,
    /// The replacement list, normalized.
    pub body: String,
}

impl Macro {
    pub fn function_like(&self) -> bool {
        !self.params.is_empty()
    }
    /// Parameters and replacement list, as one normalized text.
    pub fn definition(&self) -> String {
        format!("{} {}", self.params, self.body).trim().to_string()
    }
}

fn parse_define(rest: &str) -> (String, Macro) {
    let rest = rest.trim_start();
    let name_len = rest
        .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
        .unwrap_or(rest.len());
    let name = rest[..name_len].to_string();
    let after = &rest[name_len..];
    let (params, body) = if after.starts_with('(') {
        let close = after.find(')').map_or(after.len(), |c| c + 1);
        (normalize(&after[..close]), normalize(&after[close..]))
    } else {
        (String::new(), normalize(after))
    };
    (
        name,
        Macro {
            loc: Loc {
                file: PathBuf::new(),
                line: 0,
            },
            params,
            body,
        },
    )
}

/// The preprocessed text split into the tokens of the package's files and
/// the macros in force at its end (with the file that defined each).
pub struct Preprocessed {
    pub tokens: Vec<Tok>,
    pub macros: BTreeMap<String, Macro>,
}

/// Reads `gcc -E -dD` output; `is_package` says which files are read.
pub fn read_preprocessed(text: &str, is_package: &dyn Fn(&Path) -> bool) -> Preprocessed {
    let mut file = PathBuf::new();
    let mut line = 0usize;
    let mut pkg = false;
    let mut tokens = Vec::new();
    let mut macros = BTreeMap::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("#define ") {
            let (name, mut m) = parse_define(rest);
            m.loc = Loc {
                file: file.clone(),
                line,
            };
            macros.insert(name, m);
            line += 1;
            continue;
        }
        if let Some(rest) = l.strip_prefix("#undef ") {
            macros.remove(rest.trim());
            line += 1;
            continue;
        }
        if let Some(rest) = l.strip_prefix("# ") {
            // # <line> "<file>" <flags>
            let mut parts = rest.splitn(2, ' ');
            if let (Some(n), Some(f)) = (parts.next(), parts.next()) {
                if let Ok(n) = n.parse::<usize>() {
                    let f = f.trim();
                    if let Some(end) = f[1..].find('"') {
                        file = PathBuf::from(&f[1..=end]);
                        pkg = is_package(&file);
                    }
                    line = n;
                    continue;
                }
            }
        }
        if l.starts_with('#') {
            // #pragma and the like
            line += 1;
            continue;
        }
        if pkg {
            for t in tokenize(l) {
                tokens.push(Tok {
                    text: t,
                    loc: Loc {
                        file: file.clone(),
                        line,
                    },
                });
            }
        }
        line += 1;
    }
    Preprocessed { tokens, macros }
}

/// One member of a struct or union.
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    pub bitfield: bool,
}

/// A struct or union with its members, named as C code names it:
/// `struct Tag`, or the typedef name of an untagged one.
#[derive(Clone, Debug)]
pub struct Record {
    pub loc: Loc,
    pub members: Vec<Member>,
}

#[derive(Clone, Debug)]
pub struct Typedef {
    pub loc: Loc,
    /// The typedef's type written without its name (as a parameter type
    /// `<spec> <declarator with the name replaced by (*__uh_p)>`, a pointer
    /// to it), when its specifier can be written on its own (not an
    /// untagged struct, union or enum).
    pub pointer_to: Option<String>,
    /// A function type: it has no size.
    pub function: bool,
}

/// What a set of headers declares (only what its own files declare).
#[derive(Clone, Debug, Default)]
pub struct Declared {
    pub functions: BTreeMap<String, Loc>,
    pub objects: BTreeMap<String, Loc>,
    pub typedefs: BTreeMap<String, Typedef>,
    pub records: BTreeMap<String, Record>,
    /// `enum Tag` or the typedef name of an untagged enum, with its
    /// constants in order.
    pub enums: BTreeMap<String, (Loc, Vec<String>)>,
    pub constants: BTreeMap<String, Loc>,
}

const KEYWORDS: &[&str] = &[
    "typedef",
    "extern",
    "static",
    "inline",
    "__inline",
    "__inline__",
    "register",
    "auto",
    "_Thread_local",
    "__thread",
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__restrict__",
    "_Atomic",
    "_Noreturn",
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "__signed__",
    "_Bool",
    "_Complex",
    "struct",
    "union",
    "enum",
    "__int128",
];

fn is_tag_keyword(t: &str) -> bool {
    matches!(t, "struct" | "union" | "enum")
}

/// Index of the token closing the group opened at `open`.
fn matching(toks: &[Tok], open: usize) -> Result<usize, String> {
    let (o, c) = match toks[open].text.as_str() {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        "{" => ("{", "}"),
        _ => unreachable!(),
    };
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if t.text == o {
            depth += 1;
        } else if t.text == c {
            depth -= 1;
            if depth == 0 {
                return Ok(i);
            }
        }
    }
    Err(format!("{}: unbalanced '{o}'", toks[open].loc))
}

/// `__attribute__((...))`, `__asm__(...)` and `__extension__` removed: they
/// do not name anything (their effect on layouts is measured, not read).
fn strip_attributes(toks: &[Tok]) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].text.as_str();
        if matches!(
            t,
            "__attribute__" | "__attribute" | "__asm__" | "__asm" | "asm" | "__declspec"
        ) && toks.get(i + 1).is_some_and(|n| n.text == "(")
        {
            i = matching(toks, i + 1)? + 1;
            continue;
        }
        if t == "__extension__" {
            i += 1;
            continue;
        }
        out.push(toks[i].clone());
        i += 1;
    }
    Ok(out)
}

/// Split at `sep` where no (), [] or {} is open.
fn split_top(toks: &[Tok], sep: &str) -> Vec<Vec<Tok>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0i32;
    for t in toks {
        match t.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            s if s == sep && depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(t.clone());
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The identifier a declarator declares: its index, and whether it is a
/// function declarator (the name directly followed by a parameter list).
/// Parameter lists and array sizes are skipped; a parenthesis that opens
/// with `*` (or `(`, `^`) groups the declarator instead. Tags after
/// struct/union/enum, keywords and the type names of the specifier come
/// before the name, so the name is the last identifier left.
fn declared_name(toks: &[Tok]) -> Result<Option<(usize, bool)>, String> {
    let mut found = None;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].text.as_str();
        if t == "[" {
            i = matching(toks, i)? + 1;
            continue;
        }
        if t == "(" {
            let grouping = toks
                .get(i + 1)
                .is_some_and(|n| matches!(n.text.as_str(), "*" | "(" | "^"));
            if !grouping {
                i = matching(toks, i)? + 1;
                continue;
            }
        }
        if is_tag_keyword(t) {
            // the tag is not a declarator name
            i += 2;
            continue;
        }
        if is_ident(t) && !KEYWORDS.contains(&t) {
            found = Some(i);
        }
        i += 1;
    }
    Ok(found.map(|n| {
        let function = toks.get(n + 1).is_some_and(|t| t.text == "(");
        (n, function)
    }))
}

fn text(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A struct/union/enum body in the specifier: (kind, tag, body tokens, the
/// specifier with the body removed).
struct Body {
    kind: String,
    tag: Option<String>,
    body: Vec<Tok>,
    loc: Loc,
}

fn take_body(toks: &[Tok]) -> Result<(Vec<Tok>, Option<Body>), String> {
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            "{" if depth == 0 => {
                let close = matching(toks, i)?;
                let (kind_at, tag) = if i >= 1 && is_tag_keyword(&toks[i - 1].text) {
                    (i - 1, None)
                } else if i >= 2 && is_tag_keyword(&toks[i - 2].text) && is_ident(&toks[i - 1].text)
                {
                    (i - 2, Some(toks[i - 1].text.clone()))
                } else {
                    return Err(format!(
                        "{}: a '{{' that opens no struct, union or enum body: {}",
                        t.loc,
                        text(toks)
                    ));
                };
                let mut rest: Vec<Tok> = toks[..i].to_vec();
                if tag.is_none() {
                    // untagged: a placeholder the declarator reader skips
                    rest.push(Tok {
                        text: "__uh_untagged".into(),
                        loc: t.loc.clone(),
                    });
                }
                rest.extend_from_slice(&toks[close + 1..]);
                return Ok((
                    rest,
                    Some(Body {
                        kind: toks[kind_at].text.clone(),
                        tag,
                        body: toks[i + 1..close].to_vec(),
                        loc: toks[kind_at].loc.clone(),
                    }),
                ));
            }
            _ => {}
        }
    }
    Ok((toks.to_vec(), None))
}

impl Declared {
    /// Reads the package's tokens of one preprocessed translation unit.
    pub fn read(tokens: &[Tok]) -> Result<Declared, String> {
        let tokens = strip_attributes(tokens)?;
        let mut d = Declared::default();
        let mut start = 0;
        let mut depth = 0i32;
        let mut i = 0;
        while i < tokens.len() {
            match tokens[i].text.as_str() {
                "(" | "[" | "{" => {
                    // An inline function's body: the declaration ends with it.
                    if tokens[i].text == "{" && depth == 0 && i > start && tokens[i - 1].text == ")"
                    {
                        let close = matching(&tokens, i)?;
                        d.declaration(&tokens[start..i])?;
                        start = close + 1;
                        i = close + 1;
                        continue;
                    }
                    depth += 1;
                }
                ")" | "]" | "}" => depth -= 1,
                ";" if depth == 0 => {
                    d.declaration(&tokens[start..i])?;
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        if start < tokens.len() {
            return Err(format!(
                "{}: a declaration without its ';': {}",
                tokens[start].loc,
                text(&tokens[start..])
            ));
        }
        Ok(d)
    }

    fn declaration(&mut self, toks: &[Tok]) -> Result<(), String> {
        let Some(first) = toks.first() else {
            return Ok(());
        };
        if matches!(first.text.as_str(), "_Static_assert" | "static_assert") {
            return Ok(());
        }
        let loc = first.loc.clone();
        let is_typedef = toks.iter().any(|t| t.text == "typedef");
        let (rest, body) = take_body(toks)?;
        let pieces = split_top(&rest, ",");
        let mut names: Vec<(String, bool, Vec<Tok>, Vec<Tok>)> = Vec::new(); // name, function, spec, declarator
        let mut spec: Vec<Tok> = Vec::new();
        for (pi, piece) in pieces.iter().enumerate() {
            let Some((n, function)) = declared_name(piece)? else {
                if pi == 0 {
                    continue; // `struct X { ... };`
                }
                return Err(format!(
                    "{}: a declarator without a name: {}",
                    piece[0].loc,
                    text(piece)
                ));
            };
            let declarator = if pi == 0 {
                // The declarator starts at its first '*' or '(' (or at the name).
                let at = piece[..n]
                    .iter()
                    .position(|t| t.text == "*" || t.text == "(")
                    .unwrap_or(n);
                spec = piece[..at].to_vec();
                piece[at..].to_vec()
            } else {
                piece.clone()
            };
            names.push((piece[n].text.clone(), function, spec.clone(), declarator));
        }
        // The struct, union or enum defined here, named by its tag or by
        // the first typedef naming it as it is.
        if let Some(b) = &body {
            let key = match &b.tag {
                Some(tag) => Some(format!("{} {tag}", b.kind)),
                None if is_typedef => names
                    .iter()
                    .find(|(_, _, _, decl)| decl.len() == 1)
                    .map(|(n, ..)| n.clone()),
                None => None,
            };
            match key {
                Some(key) => self.body(&b.kind, Some(&key), &b.body, b.loc.clone())?,
                // `enum { A, B };`: constants only.
                None if b.kind == "enum" => self.body("enum", None, &b.body, b.loc.clone())?,
                None => {
                    return Err(format!(
                        "{}: an untagged {} that no typedef names: {}",
                        b.loc,
                        b.kind,
                        text(toks)
                    ))
                }
            }
        }
        for (name, function, spec, declarator) in names {
            if is_typedef {
                let spec: Vec<Tok> = spec.into_iter().filter(|t| t.text != "typedef").collect();
                let untagged = spec.iter().any(|t| t.text == "__uh_untagged");
                let pointer_to = (!untagged).then(|| {
                    let d: Vec<String> = declarator
                        .iter()
                        .map(|t| {
                            if t.text == name {
                                "(*__uh_p)".to_string()
                            } else {
                                t.text.clone()
                            }
                        })
                        .collect();
                    format!("{} {}", text(&spec), d.join(" "))
                });
                self.typedefs.insert(
                    name,
                    Typedef {
                        loc: loc.clone(),
                        pointer_to,
                        function,
                    },
                );
            } else if function {
                self.functions.insert(name, loc.clone());
            } else {
                self.objects.insert(name, loc.clone());
            }
        }
        Ok(())
    }

    fn body(
        &mut self,
        kind: &str,
        key: Option<&str>,
        body: &[Tok],
        loc: Loc,
    ) -> Result<(), String> {
        if kind == "enum" {
            let mut consts = Vec::new();
            for piece in split_top(body, ",") {
                let name = piece[0].text.clone();
                if !is_ident(&name) {
                    return Err(format!("{}: an enumerator: {}", piece[0].loc, text(&piece)));
                }
                self.constants.insert(name.clone(), piece[0].loc.clone());
                consts.push(name);
            }
            if let Some(key) = key {
                self.enums.insert(key.to_string(), (loc, consts));
            }
            return Ok(());
        }
        let mut members = Vec::new();
        self.members(body, &mut members)?;
        if let Some(key) = key {
            self.records
                .insert(key.to_string(), Record { loc, members });
        }
        Ok(())
    }

    /// The members of a struct or union body; a nested tagged body is a
    /// record of its own as well, an untagged one without a name
    /// contributes its members.
    fn members(&mut self, body: &[Tok], out: &mut Vec<Member>) -> Result<(), String> {
        for decl in split_top(body, ";") {
            let (rest, nested) = take_body(&decl)?;
            if let Some(b) = &nested {
                if let Some(tag) = &b.tag {
                    let key = format!("{} {tag}", b.kind);
                    self.body(&b.kind, Some(&key), &b.body, b.loc.clone())?;
                } else if b.kind == "enum" {
                    self.body("enum", None, &b.body, b.loc.clone())?;
                } else if declared_name(&rest)?.is_none() {
                    self.members(&b.body, out)?;
                    continue;
                }
            }
            for piece in split_top(&rest, ",") {
                let colon = piece.iter().position(|t| t.text == ":");
                let decl_part = &piece[..colon.unwrap_or(piece.len())];
                match declared_name(decl_part)? {
                    Some((n, _)) => out.push(Member {
                        name: decl_part[n].text.clone(),
                        bitfield: colon.is_some(),
                    }),
                    None if colon.is_some() => {} // an unnamed bit-field: padding
                    None => {
                        return Err(format!(
                            "{}: a member without a name: {}",
                            piece[0].loc,
                            text(&piece)
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> Declared {
        let toks: Vec<Tok> = tokenize(src)
            .into_iter()
            .map(|t| Tok {
                text: t,
                loc: Loc {
                    file: "t.h".into(),
                    line: 1,
                },
            })
            .collect();
        Declared::read(&toks).unwrap()
    }

    #[test]
    fn reads_header_declarations() {
        let d = read(
            "typedef struct M { int a; char *b[4]; void (*f)(struct M *s, int); struct { int x; }; unsigned c : 3; } M, *M_t;
             typedef enum { A, B = 4, C } E;
             enum Tag { T1 = 1 };
             extern const char *names[];
             M_t make(int n, void (*cb)(const char *));
             void old();
             static inline int twice(int x) { return 2 * x; }
             typedef int (*handler_t)(void *);
             typedef int fn_t(void);",
        );
        assert_eq!(
            d.functions.keys().collect::<Vec<_>>(),
            ["make", "old", "twice"]
        );
        assert_eq!(d.objects.keys().collect::<Vec<_>>(), ["names"]);
        let m: Vec<_> = d.records["struct M"]
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(m, ["a", "b", "f", "x", "c"]);
        assert!(d.records["struct M"].members[4].bitfield);
        assert_eq!(d.enums["E"].1, ["A", "B", "C"]);
        assert_eq!(d.enums["enum Tag"].1, ["T1"]);
        assert_eq!(
            d.typedefs["M_t"].pointer_to.as_deref(),
            Some("struct M * (*__uh_p)")
        );
        assert_eq!(d.typedefs["E"].pointer_to, None);
        assert_eq!(
            d.typedefs["handler_t"].pointer_to.as_deref(),
            Some("int ( * (*__uh_p) ) ( void * )")
        );
        assert!(d.typedefs["fn_t"].function);
    }

    #[test]
    fn guards_and_tested_options() {
        let h = "/* x */\n#ifndef A_H\n#define A_H\n#ifdef OPT_A\n#if defined(OPT_B) || X > 1\n#endif\n#endif\n#endif\n";
        assert_eq!(include_guard(h).as_deref(), Some("A_H"));
        assert_eq!(include_guard("#ifndef A\n#define A 1\n"), None);
        let t: Vec<_> = tested_identifiers(h).into_iter().collect();
        assert_eq!(t, ["A_H", "OPT_A", "OPT_B", "X"]);
        assert_eq!(
            normalize("( ( AgentChannelOps  *)0)"),
            "( ( AgentChannelOps * ) 0 )"
        );
    }
}
