//! The library's layers import downward only (`docs/architecture.md`).
//!
//! Each top-level module of `src/` is one layer, and the table below says
//! which layers it may use. The check reads every `.rs` file under `src/`
//! with syn, walks all its tokens (macro bodies included, comments and doc
//! text not), resolves each `crate::`, `$crate::`, `self::` and `super::`
//! path to the top-level module it names, and lists every use of a layer
//! that is not allowed. `the_check_flags_an_upward_import` is its negative
//! control.
//!
//! `no_circle_inside_a_layer` does the same for the modules inside each
//! layer (`runtime::tools`, `net::transport`, ...): their imports form no
//! circle, so each can be read knowing only those below it. The host port
//! is left out: it is the board's C side, written as the real sources are.

#[path = "support/sources.rs"]
mod sources;
use quote::ToTokens;
use sources::{root, rust_files};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `(layer, the layers it may use)`, from the bottom up. A layer always
/// may use itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("cjson", &["base"]),
    ("wire", &["base", "cjson"]),
    ("rtt", &["base"]),
    // The host port stands beside the kernel bindings: it serves the
    // board's C API on Linux. Nothing in the library imports it.
    ("host", &["base", "rtt"]),
    ("abi", &["base", "cjson", "rtt"]),
    ("net", &["base", "cjson", "wire", "rtt"]),
    // The agent's turn and its traits: no kernel, no network.
    ("agent", &["base", "cjson", "wire", "abi"]),
    (
        "runtime",
        &["base", "cjson", "wire", "rtt", "abi", "net", "agent"],
    ),
    // The abilities plug into runtime's hook table; runtime names none.
    (
        "abilities",
        &[
            "base", "cjson", "wire", "rtt", "abi", "net", "agent", "runtime",
        ],
    ),
    (
        "channels",
        &[
            "base", "cjson", "wire", "rtt", "abi", "net", "agent", "runtime",
        ],
    ),
    (
        "ffi",
        &[
            "base",
            "cjson",
            "wire",
            "rtt",
            "abi",
            "net",
            "agent",
            "runtime",
            "abilities",
            "channels",
        ],
    ),
];

/// Macros exported at the crate root, and the layer that defines each.
const ROOT_MACROS: &[(&str, &str)] = &[
    ("ffi_fn", "base"),
    ("log_e", "rtt"),
    ("log_w", "rtt"),
    ("log_i", "rtt"),
    ("log_d", "rtt"),
    ("host_log_e", "host"),
    ("host_log_w", "host"),
    ("host_log_i", "host"),
];

/// The module path of a source file: `src/wire/stream/mod.rs` is
/// `["wire", "stream"]`, `src/lib.rs` is `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// Every path in `tokens` that starts at the crate or climbs out of the
/// module: the sequence of identifiers, `crate`/`self`/`super` included.
fn paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
    let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            proc_macro2::TokenTree::Group(g) => paths(g.stream(), out),
            proc_macro2::TokenTree::Ident(id) => {
                let first = id.to_string();
                let starts = first == "crate" || first == "super" || first == "self";
                // A path's head is not itself after `::` (then it is a tail).
                let after_colons = i >= 2
                    && matches!(&trees[i - 1], proc_macro2::TokenTree::Punct(p) if p.as_char() == ':')
                    && matches!(&trees[i - 2], proc_macro2::TokenTree::Punct(p) if p.as_char() == ':');
                if starts && !after_colons {
                    let mut path = vec![first];
                    let mut j = i + 1;
                    loop {
                        let colons = matches!(trees.get(j), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ':')
                            && matches!(trees.get(j + 1), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ':');
                        if !colons {
                            break;
                        }
                        match trees.get(j + 2) {
                            Some(proc_macro2::TokenTree::Ident(next)) => {
                                path.push(next.to_string());
                                j += 3;
                            }
                            // `crate::{a, b}`: each branch of the group.
                            Some(proc_macro2::TokenTree::Group(g)) => {
                                for branch in split_commas(g.stream()) {
                                    let mut sub = Vec::new();
                                    let mut head = path.clone();
                                    head.extend(branch);
                                    sub.push(head);
                                    out.extend(sub);
                                }
                                j += 3;
                                break;
                            }
                            _ => break,
                        }
                    }
                    out.push(path);
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The paths of `items`, each with the module it is written in (an inline
/// `mod x { .. }` is a module of its own for `super::`).
fn walk_items(items: &[syn::Item], module: &[String], out: &mut Vec<(Vec<String>, Vec<String>)>) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            if let Some((_, inner)) = &m.content {
                let mut nested = module.to_vec();
                nested.push(m.ident.to_string());
                walk_items(inner, &nested, out);
                continue;
            }
        }
        let mut found = Vec::new();
        paths(item.to_token_stream(), &mut found);
        out.extend(found.into_iter().map(|p| (module.to_vec(), p)));
    }
}

/// The leading identifiers of each comma-separated branch of a `use` group.
fn split_commas(tokens: proc_macro2::TokenStream) -> Vec<Vec<String>> {
    let mut branches = vec![Vec::new()];
    for tree in tokens {
        match tree {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => branches.push(Vec::new()),
            proc_macro2::TokenTree::Ident(id) => {
                let b = branches.last_mut().unwrap();
                if b.len() < 2 {
                    b.push(id.to_string());
                }
            }
            _ => {}
        }
    }
    branches.retain(|b| !b.is_empty());
    branches
}

/// The whole module path a path names from inside `module` (macros
/// exported at the crate root resolve to the layer that defines them).
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut at: Vec<String> = module.to_vec();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                at.pop();
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    at.extend(rest.iter().cloned());
    let top = at.first()?.clone();
    if at.len() == 1 {
        if let Some((_, layer)) = ROOT_MACROS.iter().find(|(m, _)| *m == top) {
            return Some(vec![layer.to_string()]);
        }
    }
    Some(at)
}

/// The top-level module (the layer) a path names from inside `module`.
fn target_layer(module: &[String], path: &[String]) -> Option<String> {
    resolve(module, path)?.into_iter().next()
}

/// The module a path names inside its layer (`["runtime", "tools"]`), and
/// the imports between the modules of one layer.
fn module_edges(files: &[(PathBuf, String)]) -> BTreeSet<(String, String)> {
    let mut edges = BTreeSet::new();
    for (file, text) in files {
        let module = module_of(file);
        if module.len() < 2 || module[0] == "host" {
            continue;
        }
        let parsed = syn::parse_file(text).unwrap();
        let mut all = Vec::new();
        walk_items(&parsed.items, &module, &mut all);
        for (at, path) in all {
            let Some(target) = resolve(&at, &path) else {
                continue;
            };
            if target.len() >= 2 && target[0] == module[0] && target[1] != module[1] {
                edges.insert((module[..2].join("::"), target[..2].join("::")));
            }
        }
    }
    edges
}

/// The circles among `edges` (each a list of modules), by Tarjan's
/// strongly connected components.
fn circles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    use std::collections::BTreeMap;
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    struct Walk<'a> {
        next: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let i = w.index.len();
        w.index.insert(v, i);
        w.low.insert(v, i);
        w.stack.push(v);
        for &u in &w.next[v] {
            if !w.index.contains_key(u) {
                visit(w, u);
                let l = w.low[u].min(w.low[v]);
                w.low.insert(v, l);
            } else if w.stack.contains(&u) {
                let l = w.index[u].min(w.low[v]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut comp = Vec::new();
            while let Some(u) = w.stack.pop() {
                comp.push(u.to_string());
                if u == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                w.found.push(comp);
            }
        }
    }
    let mut w = Walk {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for &v in next.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

/// Every upward (or unknown) import in the sources under `src/`, as
/// `file: layer -> layer (path)`.
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut found = BTreeSet::new();
    for (file, text) in files {
        let module = module_of(file);
        let Some(own) = module.first() else {
            continue; // lib.rs declares the layers
        };
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let Some((_, allowed)) = LAYERS.iter().find(|(l, _)| l == own) else {
            found.insert(format!("{name}: `{own}` is in no layer of tests/layers.rs"));
            continue;
        };
        let parsed = syn::parse_file(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut all = Vec::new();
        walk_items(&parsed.items, &module, &mut all);
        for (module, path) in all {
            let Some(target) = target_layer(&module, &path) else {
                continue;
            };
            if &target == own || allowed.contains(&target.as_str()) {
                continue;
            }
            // One line per file and module used (not per item).
            let used: Vec<&str> = path.iter().map(String::as_str).take(3).collect();
            found.insert(format!("{name}: {own} -> {target} ({})", used.join("::")));
        }
    }
    found.into_iter().collect()
}

fn library_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

#[test]
fn every_import_runs_downward() {
    let found = violations(&library_sources());
    assert!(
        found.is_empty(),
        "{} import(s) run upward or leave the layers of tests/layers.rs:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_check_flags_an_upward_import() {
    let src = root().join("src");
    let cases = [
        ("wire/x.rs", "use crate::rtt::thread;", "wire -> rtt"),
        (
            "base/x.rs",
            "fn f() { crate::log_e!(\"x\"); }",
            "base -> rtt",
        ),
        ("rtt/a.rs", "use super::super::ffi::tools;", "rtt -> ffi"),
        (
            "rtt/a.rs",
            "mod m { use super::super::super::ffi::tools; }",
            "rtt -> ffi",
        ),
        (
            "cjson/x.rs",
            "use crate::{base::text, wire::stream};",
            "cjson -> wire",
        ),
        ("wire/x.rs", "fn f() { m!(crate::net::y); }", "wire -> net"),
        (
            "runtime/agent_loop.rs",
            "fn f() { crate::abilities::schedule::stop(); }",
            "runtime -> abilities",
        ),
        (
            "abilities/notes/mod.rs",
            "use crate::channels::cli;",
            "abilities -> channels",
        ),
    ];
    for (file, text, expect) in cases {
        let found = violations(&[(src.join(file), text.to_string())]);
        assert!(
            found.iter().any(|v| v.contains(expect)),
            "{file}: `{text}` should be flagged {expect}; found {found:?}"
        );
    }
    let clean = violations(&[(
        src.join("net/x.rs"),
        "use crate::wire::stream; use super::token_limit; fn f() { crate::log_w!(\"x\"); }"
            .to_string(),
    )]);
    assert!(clean.is_empty(), "downward imports flagged: {clean:?}");
}

#[test]
fn no_circle_inside_a_layer() {
    let found = circles(&module_edges(&library_sources()));
    assert!(
        found.is_empty(),
        "modules of one layer that import each other in a circle:\n{}",
        found
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_check_flags_a_circle() {
    let src = root().join("src");
    let files = [
        (src.join("net/a.rs"), "use super::b::x;".to_string()),
        (src.join("net/b.rs"), "use super::c::y;".to_string()),
        (
            src.join("net/c.rs"),
            "fn f() { crate::net::a::z(); }".to_string(),
        ),
        (src.join("net/d.rs"), "use super::a::x;".to_string()),
    ];
    let found = circles(&module_edges(&files));
    assert_eq!(
        found,
        vec![vec![
            "net::a".to_string(),
            "net::b".to_string(),
            "net::c".to_string()
        ]]
    );
}

/// Where the library may declare C symbols (`extern "C" { .. }`): the
/// kernel's and the glue's in `rtt` (the glue's in `rtt::glue`), cJSON's in
/// `cjson::sys`, and the host port, which is the board's C side. Anywhere
/// else a declaration would be a call into C this test cannot see. One
/// `extern "Rust"` declaration is allowed, in `runtime/ability.rs`: the
/// abilities' table, which the layer above defines and the linker finds
/// (anywhere else such a declaration would be an upward call by name).
fn foreign_declarations_outside_rtt(files: &[(PathBuf, String)]) -> Vec<String> {
    fn walk(items: &[syn::Item], file: &str, out: &mut Vec<String>) {
        for item in items {
            match item {
                syn::Item::ForeignMod(m)
                    if file.ends_with("runtime/ability.rs")
                        && m.abi.name.as_ref().is_some_and(|n| n.value() == "Rust") => {}
                syn::Item::ForeignMod(m) => {
                    for f in &m.items {
                        let name = match f {
                            syn::ForeignItem::Fn(f) => f.sig.ident.to_string(),
                            syn::ForeignItem::Static(s) => s.ident.to_string(),
                            other => other.to_token_stream().to_string(),
                        };
                        out.push(format!("{file}: {name}"));
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        walk(inner, file, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for (path, text) in files {
        let module = module_of(path);
        let allowed = match module.first().map(String::as_str) {
            Some("rtt") | Some("host") => true,
            Some("cjson") => module.get(1).map(String::as_str) == Some("sys"),
            _ => false,
        };
        if allowed {
            continue;
        }
        let ast = syn::parse_file(text).unwrap();
        walk(&ast.items, &path.display().to_string(), &mut out);
    }
    out
}

#[test]
fn c_symbols_are_declared_in_rtt_only() {
    let found = foreign_declarations_outside_rtt(&library_sources());
    assert!(
        found.is_empty(),
        "C symbols declared outside rtt (the glue's belong in rtt::glue, the kernel's in rtt::kernel):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_flags_a_declaration_outside_rtt() {
    let src = root().join("src");
    let files = [
        (
            src.join("runtime/x.rs"),
            "extern \"C\" { fn agent_glue_x() -> i32; }".to_string(),
        ),
        (
            src.join("channels/y.rs"),
            "mod inner { extern \"C\" { static agent_y: i32; } }".to_string(),
        ),
        (
            src.join("rtt/glue.rs"),
            "extern \"C\" { fn agent_glue_z(); }".to_string(),
        ),
        (
            src.join("cjson/sys.rs"),
            "extern \"C\" { fn cJSON_Parse(); }".to_string(),
        ),
        (
            src.join("cjson/tree.rs"),
            "extern \"C\" { fn cJSON_Print(); }".to_string(),
        ),
    ];
    let found = foreign_declarations_outside_rtt(&files);
    let names: Vec<&str> = found
        .iter()
        .map(|f| f.rsplit(": ").next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["agent_glue_x", "agent_y", "cJSON_Print"],
        "{found:?}"
    );
}
