//! The comparison behind tests/decls.rs: both sides (the library's Rust
//! declarations and bindgen's bindings of the C headers) are read with `syn`
//! into one table each, every type is resolved through its aliases down to a
//! canonical C type for one target (integer widths, pointers, function
//! pointers, structs by tag), and the two tables are compared item by item.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use syn::{Expr, FnArg, ForeignItem, Item, Lit, ReturnType, Type, UnOp};

/// What the integer spellings mean on the target being checked.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub name: &'static str,
    pub pointer_bits: u32,
    pub long_bits: u32,
}

/// A C type as the ABI sees it. `char` is kept apart from `signed char` and
/// `unsigned char` on purpose: Rust's `c_char` follows the target like C's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Void,
    Never,
    Bool,
    Char,
    Int {
        signed: bool,
        bits: u32,
    },
    Float(u32),
    Ptr {
        mutable: bool,
        to: Box<Ty>,
    },
    Fn {
        args: Vec<Ty>,
        ret: Box<Ty>,
        variadic: bool,
    },
    Array(Box<Ty>, u64),
    Struct(String),
    Unknown(String),
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Void => write!(f, "void"),
            Ty::Never => write!(f, "!"),
            Ty::Bool => write!(f, "bool"),
            Ty::Char => write!(f, "char"),
            Ty::Int { signed, bits } => write!(f, "{}{}", if *signed { "i" } else { "u" }, bits),
            Ty::Float(b) => write!(f, "f{b}"),
            Ty::Ptr { mutable, to } => {
                write!(f, "{} {}", if *mutable { "*mut" } else { "*const" }, to)
            }
            Ty::Fn {
                args,
                ret,
                variadic,
            } => {
                write!(f, "fn(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                if *variadic {
                    write!(f, ", ...")?;
                }
                write!(f, ") -> {ret}")
            }
            Ty::Array(t, n) => write!(f, "[{t}; {n}]"),
            Ty::Struct(s) => write!(f, "struct {s}"),
            Ty::Unknown(s) => write!(f, "<unresolved {s}>"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FnDecl {
    pub name: String,
    pub args: Vec<(String, Type)>,
    pub ret: Option<Type>,
    pub variadic: bool,
    /// Where it was read (a Rust file, or "bindgen").
    pub origin: String,
}

#[derive(Clone, Debug)]
pub struct StructDecl {
    /// None: opaque (no fields, or only zero-length `_private`/`_unused` arrays).
    pub fields: Option<Vec<(String, Type)>>,
    pub origin: String,
}

/// Everything one side declares.
#[derive(Default, Debug)]
pub struct Decls {
    pub fns: BTreeMap<String, FnDecl>,
    pub structs: BTreeMap<String, StructDecl>,
    /// Each alias name with every distinct definition seen (more than one is
    /// an ambiguity, reported when a checked signature uses it).
    pub aliases: BTreeMap<String, Vec<Type>>,
    pub consts: BTreeMap<String, (i128, String)>,
    /// Layouts clang computed (bindgen's layout assertions): "Size of X",
    /// "Alignment of X", "Offset of field: X::f" -> bytes.
    pub layout: BTreeMap<String, u64>,
}

fn tokens(t: &impl quote::ToTokens) -> String {
    t.to_token_stream().to_string()
}

pub fn type_text(t: &Type) -> String {
    tokens(t).replace(" :: ", "::").replace(":: ", "::")
}

fn is_repr_c(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("repr") && tokens(&a.meta).contains('C'))
}

fn is_no_mangle(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| tokens(&a.meta).replace(' ', "").contains("no_mangle"))
}

fn int_value(e: &Expr) -> Option<i128> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse::<i128>().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => int_value(&u.expr).map(|v| -v),
        Expr::Paren(p) => int_value(&p.expr),
        Expr::Cast(c) => int_value(&c.expr),
        Expr::Group(g) => int_value(&g.expr),
        _ => None,
    }
}

fn fn_from_sig(sig: &syn::Signature, origin: &str) -> FnDecl {
    let args = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(p) => Some((tokens(&p.pat), (*p.ty).clone())),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let ret = match &sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, t) => Some((**t).clone()),
    };
    FnDecl {
        name: sig.ident.to_string(),
        args,
        ret,
        variadic: sig.variadic.is_some(),
        origin: origin.to_string(),
    }
}

/// Which items of a file to take as function declarations.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// Functions declared in `extern "C" { ... }` blocks (imports).
    Imports,
    /// `#[no_mangle] extern "C" fn` definitions (the host port's exports).
    Exports,
    /// Types and constants only.
    TypesOnly,
}

impl Decls {
    /// A second declaration of the same function (another file) is kept
    /// and checked too, under a key of its own.
    fn insert_fn(&mut self, d: FnDecl) {
        let key = if self.fns.contains_key(&d.name) {
            format!("{}@{}", d.name, d.origin)
        } else {
            d.name.clone()
        };
        self.fns.insert(key, d);
    }

    /// Read the items of one Rust file (nested inline modules included).
    pub fn add_file(&mut self, text: &str, origin: &str, take: Take, consts: bool) {
        let file =
            syn::parse_file(text).unwrap_or_else(|e| panic!("{origin}: not parseable by syn: {e}"));
        self.add_items(&file.items, origin, take, consts);
        // Name the line of each declaration read from this file.
        for f in self
            .fns
            .values_mut()
            .filter(|f| f.origin == origin && origin != "bindgen")
        {
            let pat = format!("fn {}(", f.name);
            if let Some(i) = text.lines().position(|l| l.contains(&pat)) {
                f.origin = format!("{origin}:{}", i + 1);
            }
        }
    }

    fn add_items(&mut self, items: &[Item], origin: &str, take: Take, consts: bool) {
        for item in items {
            match item {
                Item::ForeignMod(m) if take == Take::Imports => {
                    for fi in &m.items {
                        if let ForeignItem::Fn(f) = fi {
                            let d = fn_from_sig(&f.sig, origin);
                            self.insert_fn(d);
                        }
                    }
                }
                Item::Fn(f) if take == Take::Exports => {
                    let abi_c = f
                        .sig
                        .abi
                        .as_ref()
                        .is_some_and(|a| a.name.as_ref().is_none_or(|n| n.value() == "C"));
                    if abi_c && is_no_mangle(&f.attrs) {
                        let d = fn_from_sig(&f.sig, origin);
                        self.insert_fn(d);
                    }
                }
                Item::Type(t) => {
                    let defs = self.aliases.entry(t.ident.to_string()).or_default();
                    if !defs.iter().any(|d| type_text(d) == type_text(&t.ty)) {
                        defs.push((*t.ty).clone());
                    }
                }
                Item::Struct(s) if is_repr_c(&s.attrs) || origin == "bindgen" => {
                    let mut fields = Vec::new();
                    let mut opaque = true;
                    for f in &s.fields {
                        let name = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                        let zero_len =
                            matches!(&f.ty, Type::Array(a) if int_value(&a.len) == Some(0));
                        if !(zero_len && name.starts_with('_')) {
                            opaque = false;
                        }
                        fields.push((name, f.ty.clone()));
                    }
                    self.structs.insert(
                        s.ident.to_string(),
                        StructDecl {
                            fields: if opaque { None } else { Some(fields) },
                            origin: origin.into(),
                        },
                    );
                }
                Item::Union(u) if origin == "bindgen" => {
                    // Unions only matter as names here (never mirrored in Rust).
                    let name = u.ident.to_string();
                    self.structs.insert(
                        name,
                        StructDecl {
                            fields: None,
                            origin: origin.into(),
                        },
                    );
                }
                Item::Const(c) if consts => {
                    if let Some(v) = int_value(&c.expr) {
                        self.consts
                            .insert(c.ident.to_string(), (v, origin.to_string()));
                    }
                }
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.add_items(inner, origin, take, consts);
                    }
                }
                _ => {}
            }
        }
    }

    /// bindgen's output: declarations, types, constants and clang's layouts.
    pub fn from_bindgen(text: &str) -> Decls {
        let mut d = Decls::default();
        d.add_file(text, "bindgen", Take::Imports, true);
        // Layout assertions look like
        //   ["Size of foo"][::std::mem::size_of::<foo>() - 40usize];
        let mut rest = text;
        while let Some(i) = rest.find("[\"") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find("\"]") else { break };
            let key = rest[..end].to_string();
            rest = &rest[end..];
            if !(key.starts_with("Size of ")
                || key.starts_with("Alignment of ")
                || key.starts_with("Offset of field: "))
            {
                continue;
            }
            let Some(close) = rest.find("usize]") else {
                break;
            };
            let expr = &rest[..close];
            if let Some(minus) = expr.rfind("- ") {
                if let Ok(v) = expr[minus + 2..].trim().parse::<u64>() {
                    d.layout.insert(key, v);
                }
            }
        }
        d
    }

    /// Resolve a type to its canonical C form for `target`.
    pub fn canon(&self, t: &Type, target: Target) -> Ty {
        self.canon_depth(t, target, 0)
    }

    fn canon_depth(&self, t: &Type, target: Target, depth: u32) -> Ty {
        if depth > 32 {
            return Ty::Unknown(format!("alias loop at {}", type_text(t)));
        }
        match t {
            Type::Ptr(p) => Ty::Ptr {
                mutable: p.mutability.is_some(),
                to: Box::new(self.canon_depth(&p.elem, target, depth + 1)),
            },
            Type::Tuple(tu) if tu.elems.is_empty() => Ty::Void,
            Type::Never(_) => Ty::Never,
            Type::Paren(p) => self.canon_depth(&p.elem, target, depth + 1),
            Type::Group(g) => self.canon_depth(&g.elem, target, depth + 1),
            Type::Array(a) => {
                let elem = self.canon_depth(&a.elem, target, depth + 1);
                let n = int_value(&a.len).or_else(|| match &a.len {
                    Expr::Path(p) => p
                        .path
                        .get_ident()
                        .and_then(|i| self.consts.get(&i.to_string()).map(|c| c.0)),
                    _ => None,
                });
                match n {
                    Some(n) => Ty::Array(Box::new(elem), n as u64),
                    None => Ty::Unknown(type_text(t)),
                }
            }
            Type::BareFn(f) => Ty::Fn {
                args: f
                    .inputs
                    .iter()
                    .map(|a| self.canon_depth(&a.ty, target, depth + 1))
                    .collect(),
                ret: Box::new(match &f.output {
                    ReturnType::Default => Ty::Void,
                    ReturnType::Type(_, r) => self.canon_depth(r, target, depth + 1),
                }),
                variadic: f.variadic.is_some(),
            },
            Type::Path(p) => {
                let Some(last) = p.path.segments.last() else {
                    return Ty::Unknown(type_text(t));
                };
                let name = last.ident.to_string();
                if name == "Option" {
                    // Option<fn> is a nullable function pointer: same ABI.
                    if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                        if let Some(syn::GenericArgument::Type(inner)) = args.args.first() {
                            let c = self.canon_depth(inner, target, depth + 1);
                            if matches!(c, Ty::Fn { .. }) {
                                return c;
                            }
                        }
                    }
                    return Ty::Unknown(type_text(t));
                }
                let int = |signed, bits| Ty::Int { signed, bits };
                match name.as_str() {
                    "i8" | "c_schar" => int(true, 8),
                    "u8" | "c_uchar" => int(false, 8),
                    "i16" | "c_short" => int(true, 16),
                    "u16" | "c_ushort" => int(false, 16),
                    "i32" | "c_int" => int(true, 32),
                    "u32" | "c_uint" => int(false, 32),
                    "i64" | "c_longlong" => int(true, 64),
                    "u64" | "c_ulonglong" => int(false, 64),
                    "i128" => int(true, 128),
                    "u128" => int(false, 128),
                    "isize" => int(true, target.pointer_bits),
                    "usize" => int(false, target.pointer_bits),
                    "c_long" => int(true, target.long_bits),
                    "c_ulong" => int(false, target.long_bits),
                    "c_char" => Ty::Char,
                    "c_void" => Ty::Void,
                    "bool" => Ty::Bool,
                    "f32" | "c_float" => Ty::Float(32),
                    "f64" | "c_double" => Ty::Float(64),
                    _ => {
                        if let Some(defs) = self.aliases.get(&name) {
                            if defs.len() > 1 {
                                let all: Vec<String> = defs.iter().map(type_text).collect();
                                return Ty::Unknown(format!(
                                    "{name} (ambiguous alias: {})",
                                    all.join(" | ")
                                ));
                            }
                            return self.canon_depth(&defs[0], target, depth + 1);
                        }
                        if self.structs.contains_key(&name) {
                            return Ty::Struct(name);
                        }
                        Ty::Unknown(type_text(t))
                    }
                }
            }
            _ => Ty::Unknown(type_text(t)),
        }
    }

    pub fn ret(&self, f: &FnDecl, target: Target) -> Ty {
        f.ret.as_ref().map_or(Ty::Void, |r| self.canon(r, target))
    }

    /// The C layout of a canonical type (Rust side: `repr(C)` follows it).
    pub fn size_align(&self, t: &Ty, target: Target) -> Option<(u64, u64)> {
        Some(match t {
            Ty::Bool | Ty::Char => (1, 1),
            Ty::Int { bits, .. } | Ty::Float(bits) => {
                let s = u64::from(*bits / 8);
                (s, s.min(if target.pointer_bits == 64 { 16 } else { 8 }))
            }
            Ty::Ptr { .. } | Ty::Fn { .. } => {
                let s = u64::from(target.pointer_bits / 8);
                (s, s)
            }
            Ty::Array(e, n) => {
                let (s, a) = self.size_align(e, target)?;
                (s * n, a)
            }
            Ty::Struct(name) => {
                let l = self.struct_layout(name, target)?;
                (l.0, l.1)
            }
            _ => return None,
        })
    }

    /// (size, align, field offsets) of a Rust `repr(C)` struct.
    pub fn struct_layout(&self, name: &str, target: Target) -> Option<(u64, u64, Vec<u64>)> {
        let s = self.structs.get(name)?;
        let fields = s.fields.as_ref()?;
        let (mut off, mut align, mut offs) = (0u64, 1u64, Vec::new());
        for (_, ft) in fields {
            let (fs, fa) = self.size_align(&self.canon(ft, target), target)?;
            off = off.div_ceil(fa) * fa;
            offs.push(off);
            off += fs;
            align = align.max(fa);
        }
        Some((off.div_ceil(align) * align, align, offs))
    }
}

/// The outcome of comparing one side with the other.
#[derive(Default, Debug)]
pub struct Report {
    pub compared_fns: Vec<String>,
    pub compared_structs: Vec<String>,
    pub compared_consts: Vec<String>,
    pub mismatches: Vec<String>,
    pub not_kernel: Vec<String>,
    pub skipped_groups: Vec<String>,
}

/// The prefixes of the APIs this check owns: the board's kernel, device,
/// finsh/shell, ulog and webclient. Anything else (the C glue, cJSON, the
/// user's tool file) is checked by tests/abi.rs against our own headers.
pub const API_PREFIXES: &[&str] = &["rt_", "webclient_", "ulog_", "finsh_", "msh_", "web_"];

/// The board's POSIX file calls (DFS), by exact name: multimodal messages
/// read files through them (`src/rtt/file.rs`).
pub const API_NAMES: &[&str] = &["open", "read", "close"];

pub fn is_api(name: &str) -> bool {
    API_PREFIXES.iter().any(|p| name.starts_with(p)) || API_NAMES.contains(&name)
}

pub struct Compare<'a> {
    pub rust: &'a Decls,
    pub c: &'a Decls,
    pub target: Target,
    /// Functions with these prefixes are expected in the headers only when
    /// the group's header was given (e.g. "webclient_" without WEBCLIENT_SRC).
    pub absent_groups: Vec<&'static str>,
    /// Names the headers need not declare (e.g. the host port's own helpers
    /// when checking against the real kernel).
    pub exempt_prefixes: Vec<&'static str>,
    /// Where to look up a header line for a mismatch message.
    pub locate: &'a dyn Fn(&str) -> String,
}

impl Compare<'_> {
    pub fn run(&self) -> Report {
        let mut r = Report::default();
        let mut structs_seen = BTreeSet::new();
        for rf in self.rust.fns.values() {
            let name = &rf.name;
            if !is_api(name) {
                r.not_kernel.push(name.clone());
                continue;
            }
            if let Some(g) = self.absent_groups.iter().find(|g| name.starts_with(**g)) {
                r.skipped_groups
                    .push(format!("{name} (no {g}* header given)"));
                continue;
            }
            let Some(cf) = self.c.fns.get(name) else {
                if self.exempt_prefixes.iter().any(|p| name.starts_with(p)) {
                    r.not_kernel.push(name.clone());
                } else {
                    r.mismatches.push(format!(
                        "{name}: declared in {} but not declared by the headers",
                        rf.origin
                    ));
                }
                continue;
            };
            r.compared_fns.push(name.clone());
            let mut problems = Vec::new();
            if rf.args.len() != cf.args.len() {
                problems.push(format!(
                    "{} parameters in Rust, {} in C",
                    rf.args.len(),
                    cf.args.len()
                ));
            }
            for (i, ((rn, rt), (_, ct))) in rf.args.iter().zip(&cf.args).enumerate() {
                let (a, b) = (
                    self.rust.canon(rt, self.target),
                    self.c.canon(ct, self.target),
                );
                collect_structs(&a, &mut structs_seen);
                if a != b || matches!(a, Ty::Unknown(_)) {
                    problems.push(format!(
                        "parameter {} `{rn}`: Rust `{}` = {a}, C `{}` = {b}",
                        i + 1,
                        type_text(rt),
                        type_text(ct)
                    ));
                }
            }
            let (a, b) = (self.rust.ret(rf, self.target), self.c.ret(cf, self.target));
            collect_structs(&a, &mut structs_seen);
            if a != b || matches!(a, Ty::Unknown(_)) {
                let show = |d: &FnDecl| d.ret.as_ref().map_or("()".to_string(), type_text);
                problems.push(format!(
                    "return: Rust `{}` = {a}, C `{}` = {b}",
                    show(rf),
                    show(cf)
                ));
            }
            if rf.variadic != cf.variadic {
                problems.push(format!(
                    "variadic in {} only",
                    if rf.variadic { "Rust" } else { "C" }
                ));
            }
            if !problems.is_empty() {
                r.mismatches.push(format!(
                    "{name} ({}; header: {}):\n      {}",
                    rf.origin,
                    (self.locate)(name),
                    problems.join("\n      ")
                ));
            }
        }
        // Structs: every one a checked signature reaches, and every repr(C)
        // struct of ours that the headers also define.
        for name in self.rust.structs.keys() {
            if self.c.structs.contains_key(name) {
                structs_seen.insert(name.clone());
            }
        }
        for name in &structs_seen {
            self.compare_struct(name, &mut r);
        }
        // Constants of ours that the headers also define.
        for (name, (v, origin)) in &self.rust.consts {
            if let Some((cv, _)) = self.c.consts.get(name) {
                r.compared_consts.push(name.clone());
                if v != cv {
                    r.mismatches.push(format!(
                        "const {name}: {v} in {origin}, {cv} in the headers"
                    ));
                }
            }
        }
        r
    }

    fn compare_struct(&self, name: &str, r: &mut Report) {
        let Some(rs) = self.rust.structs.get(name) else {
            return;
        };
        let Some(cs) = self.c.structs.get(name) else {
            r.mismatches.push(format!(
                "struct {name} ({}): not defined by the headers",
                rs.origin
            ));
            return;
        };
        r.compared_structs.push(name.to_string());
        let Some(rfields) = &rs.fields else {
            return; // opaque in Rust: only handled through pointers
        };
        let Some(cfields) = &cs.fields else {
            r.mismatches.push(format!(
                "struct {name} ({}): Rust gives its fields, the headers leave it incomplete",
                rs.origin
            ));
            return;
        };
        let mut problems = Vec::new();
        if rfields.len() != cfields.len() {
            problems.push(format!(
                "{} fields in Rust, {} in C",
                rfields.len(),
                cfields.len()
            ));
        }
        let layout = self.rust.struct_layout(name, self.target);
        for (i, ((rn, rt), (cn, ct))) in rfields.iter().zip(cfields).enumerate() {
            let (a, b) = (
                self.rust.canon(rt, self.target),
                self.c.canon(ct, self.target),
            );
            if rn != cn || a != b {
                problems.push(format!(
                    "field {}: Rust `{rn}: {}` = {a}, C `{cn}: {}` = {b}",
                    i + 1,
                    type_text(rt),
                    type_text(ct)
                ));
            }
            let c_off = self.c.layout.get(&format!("Offset of field: {name}::{cn}"));
            let r_off = layout.as_ref().map(|l| l.2[i]);
            if let (Some(c), Some(rr)) = (c_off, r_off) {
                if *c != rr {
                    problems.push(format!("field `{rn}` at offset {rr} in Rust, {c} in C"));
                }
            }
        }
        match layout {
            Some((size, align, _)) => {
                for (what, ours) in [("Size", size), ("Alignment", align)] {
                    if let Some(c) = self.c.layout.get(&format!("{what} of {name}")) {
                        if *c != ours {
                            problems.push(format!("{what}: {ours} in Rust, {c} in C"));
                        }
                    }
                }
            }
            None => problems.push("layout of the Rust struct not computable".into()),
        }
        if !problems.is_empty() {
            r.mismatches.push(format!(
                "struct {name} ({}):\n      {}",
                rs.origin,
                problems.join("\n      ")
            ));
        }
    }
}

fn collect_structs(t: &Ty, out: &mut BTreeSet<String>) {
    match t {
        Ty::Struct(s) => {
            out.insert(s.clone());
        }
        Ty::Ptr { to, .. } => collect_structs(to, out),
        Ty::Array(e, _) => collect_structs(e, out),
        Ty::Fn { args, ret, .. } => {
            for a in args {
                collect_structs(a, out);
            }
            collect_structs(ret, out);
        }
        _ => {}
    }
}
