//! The one boundary (see `src/ffi/mod.rs`): every function the library hands
//! to C goes through `ffi_fn!`, and a panic inside one aborts with its message.
//!
//! 1. `every_export_and_callback_goes_through_ffi_fn` reads every `.rs` file
//!    under `src/` except `src/host/` and lists each `#[no_mangle]` function
//!    and each `extern "C" fn` definition that is not in the one shape:
//!    `[#[no_mangle] pub] [unsafe] extern "C" fn name(..) [-> T] { ffi_fn!(failure = v, ..) }`,
//!    `unsafe` whenever an argument is a raw pointer or a pointer typedef.
//!    `src/host/` is exempt: it is the host port of the *kernel's* API
//!    (`rt_malloc`, `rt_mb_send`, `webclient_*`...), the board's side of the
//!    boundary, not the library's.
//! 2. `the_check_flags_a_bypass` is its negative control.
//! 3. `a_panic_in_a_boundary_aborts_with_its_message` runs a child process
//!    that calls the hidden host export `rt_host_test_panic_in_boundary`.

#[path = "support/sources.rs"]
mod sources;
use sources::{root, rust_files};
use syn::{Attribute, Block, FnArg, Item, Signature, Stmt, Type, Visibility};

/// The library's sources the check covers: `src/**/*.rs` without `src/host/`.
fn library_sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|p| !p.starts_with(root().join("src/host")))
        .map(|p| {
            let name = p.strip_prefix(root()).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn is_no_mangle(attr: &Attribute) -> bool {
    // `#[no_mangle]` and the 2024 spelling `#[unsafe(no_mangle)]`.
    attr.path().is_ident("no_mangle")
        || (attr.path().is_ident("unsafe")
            && quote::quote!(#attr).to_string().contains("no_mangle"))
}

/// `type X = *mut Y;` names, from every source file (the kernel's too).
fn pointer_typedefs(sources: &[(String, String)]) -> Vec<String> {
    let mut names = Vec::new();
    fn walk(items: &[Item], names: &mut Vec<String>) {
        for item in items {
            match item {
                Item::Type(t) if matches!(*t.ty, Type::Ptr(_)) => names.push(t.ident.to_string()),
                Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        walk(items, names);
                    }
                }
                _ => {}
            }
        }
    }
    for (_, text) in sources {
        walk(&syn::parse_file(text).unwrap().items, &mut names);
    }
    names
}

fn is_pointer(ty: &Type, typedefs: &[String]) -> bool {
    match ty {
        Type::Ptr(_) => true,
        Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| typedefs.iter().any(|t| s.ident == t)),
        Type::Paren(p) => is_pointer(&p.elem, typedefs),
        Type::Group(g) => is_pointer(&g.elem, typedefs),
        _ => false,
    }
}

/// Is the body exactly `ffi_fn!(failure = ..)`?
fn body_is_ffi_fn(block: &Block) -> bool {
    let [stmt] = block.stmts.as_slice() else {
        return false;
    };
    let mac = match stmt {
        Stmt::Macro(m) => &m.mac,
        Stmt::Expr(syn::Expr::Macro(m), None) => &m.mac,
        _ => return false,
    };
    mac.path
        .segments
        .last()
        .is_some_and(|s| s.ident == "ffi_fn")
        && mac.tokens.to_string().starts_with("failure =")
}

struct Checker<'a> {
    file: &'a str,
    typedefs: &'a [String],
    problems: Vec<String>,
    checked: usize,
}

impl Checker<'_> {
    fn function(&mut self, attrs: &[Attribute], vis: &Visibility, sig: &Signature, block: &Block) {
        let no_mangle = attrs.iter().any(is_no_mangle);
        let extern_c = sig
            .abi
            .as_ref()
            .is_some_and(|abi| abi.name.as_ref().is_none_or(|n| n.value() == "C"));
        if sig.abi.is_some() && !extern_c {
            self.problems.push(format!(
                "{}: fn {}: only extern \"C\" is allowed",
                self.file, sig.ident
            ));
        }
        if !no_mangle && !extern_c {
            self.nested(block);
            return;
        }
        self.checked += 1;
        let name = format!("{}: fn {}", self.file, sig.ident);
        if no_mangle && !extern_c {
            self.problems
                .push(format!("{name}: #[no_mangle] without extern \"C\""));
        }
        if no_mangle && !matches!(vis, Visibility::Public(_)) {
            self.problems
                .push(format!("{name}: #[no_mangle] but not pub"));
        }
        if !body_is_ffi_fn(block) {
            self.problems
                .push(format!("{name}: the body is not `ffi_fn!(failure = ..)`"));
        }
        let takes_pointer = sig.inputs.iter().any(|arg| match arg {
            FnArg::Typed(t) => is_pointer(&t.ty, self.typedefs),
            FnArg::Receiver(_) => false,
        });
        if takes_pointer && sig.unsafety.is_none() {
            self.problems
                .push(format!("{name}: takes a pointer but is not `unsafe`"));
        }
    }

    /// Functions defined inside a function body.
    fn nested(&mut self, block: &Block) {
        let items: Vec<Item> = block
            .stmts
            .iter()
            .filter_map(|s| match s {
                Stmt::Item(i) => Some(i.clone()),
                _ => None,
            })
            .collect();
        self.items(&items);
    }

    fn items(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Fn(f) => self.function(&f.attrs, &f.vis, &f.sig, &f.block),
                Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        self.items(items);
                    }
                }
                Item::Impl(i) => {
                    for it in &i.items {
                        if let syn::ImplItem::Fn(f) = it {
                            self.function(&f.attrs, &f.vis, &f.sig, &f.block);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// The problems found in one file, and how many functions were checked.
fn check(file: &str, text: &str, typedefs: &[String]) -> (Vec<String>, usize) {
    let parsed = syn::parse_file(text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut c = Checker {
        file,
        typedefs,
        problems: Vec::new(),
        checked: 0,
    };
    c.items(&parsed.items);
    // A `#[no_mangle]` that syn did not see as an attribute of a checked
    // function or a static is inside a macro invocation: not allowed either.
    let written = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .filter(|l| l.contains("no_mangle"))
        .count();
    let statics = count_no_mangle_statics(&parsed.items);
    let fns = count_no_mangle_fns(&parsed.items);
    if written != statics + fns {
        c.problems.push(format!(
            "{file}: {written} `no_mangle` lines, but {fns} functions and {statics} statics carry one (one hidden in a macro?)"
        ));
    }
    (c.problems, c.checked)
}

fn count_no_mangle_statics(items: &[Item]) -> usize {
    items
        .iter()
        .map(|i| match i {
            Item::Static(s) => s.attrs.iter().filter(|a| is_no_mangle(a)).count(),
            Item::Mod(m) => m
                .content
                .as_ref()
                .map_or(0, |(_, items)| count_no_mangle_statics(items)),
            _ => 0,
        })
        .sum()
}

fn count_no_mangle_fns(items: &[Item]) -> usize {
    items
        .iter()
        .map(|i| match i {
            Item::Fn(f) => f.attrs.iter().filter(|a| is_no_mangle(a)).count(),
            Item::Mod(m) => m
                .content
                .as_ref()
                .map_or(0, |(_, items)| count_no_mangle_fns(items)),
            Item::Impl(im) => im
                .items
                .iter()
                .map(|it| match it {
                    syn::ImplItem::Fn(f) => f.attrs.iter().filter(|a| is_no_mangle(a)).count(),
                    _ => 0,
                })
                .sum(),
            _ => 0,
        })
        .sum()
}

#[test]
fn every_export_and_callback_goes_through_ffi_fn() {
    let sources = library_sources();
    let typedefs = pointer_typedefs(&sources);
    assert!(typedefs.iter().any(|t| t == "Messages_t"), "{typedefs:?}");
    let mut problems = Vec::new();
    let mut checked = 0;
    for (file, text) in &sources {
        let (p, n) = check(file, text, &typedefs);
        problems.extend(p);
        checked += n;
    }
    assert!(
        problems.is_empty(),
        "functions handed to C outside the one boundary (src/ffi/mod.rs):\n{}",
        problems.join("\n")
    );
    // 50 exports, 16 callbacks, the hidden panic export: a floor, so that a
    // parser that silently sees nothing cannot pass.
    assert!(checked >= 60, "only {checked} functions checked");
}

/// The negative control: each way of bypassing the boundary is flagged, and
/// the accepted shapes are not.
#[test]
fn the_check_flags_a_bypass() {
    let typedefs = vec!["Messages_t".to_string()];
    let good = r#"
        /// Ownership: borrows `m`.
        #[no_mangle]
        pub unsafe extern "C" fn good(m: Messages_t) -> i32 {
            ffi_fn!(failure = -1, nonnull(m), { 0 })
        }
        unsafe extern "C" fn good_callback(p: *const u8) {
            ffi_fn!(failure = (), { let _ = p; })
        }
        #[no_mangle]
        pub static mut table: i32 = 0;
        fn plain_rust(p: *const u8) -> *const u8 { p }
    "#;
    let (p, n) = check("good.rs", good, &typedefs);
    assert!(p.is_empty(), "{p:?}");
    assert_eq!(n, 2);

    let bad = [
        // An export written by hand.
        (
            "#[no_mangle] pub unsafe extern \"C\" fn f(p: *mut u8) -> i32 { 0 }",
            "not `ffi_fn!",
        ),
        // The old boundary.
        (
            "#[no_mangle] pub extern \"C\" fn f() -> i32 { ffi_boundary!(-1, { 0 }) }",
            "not `ffi_fn!",
        ),
        // A callback for a C table, by hand, inside another function.
        (
            "fn outer() { unsafe extern \"C\" fn cb(x: i32) -> i32 { x } }",
            "not `ffi_fn!",
        ),
        // Work before the macro.
        (
            "#[no_mangle] pub extern \"C\" fn f() -> i32 { let x = 1; ffi_fn!(failure = -1, { x }) }",
            "not `ffi_fn!",
        ),
        // A pointer (typedef) taken by a safe function.
        (
            "#[no_mangle] pub extern \"C\" fn f(m: Messages_t) { ffi_fn!(failure = (), { let _ = m; }) }",
            "not `unsafe`",
        ),
        // An export in a macro, where the check (and cbindgen) cannot see it.
        (
            "my_macro! { #[no_mangle] pub extern \"C\" fn f() {} }",
            "hidden in a macro",
        ),
        // The 2024 spelling of no_mangle, private.
        (
            "#[unsafe(no_mangle)] extern \"C\" fn f() { ffi_fn!(failure = (), {}) }",
            "not pub",
        ),
    ];
    for (snippet, expected) in bad {
        let (p, _) = check("bad.rs", snippet, &typedefs);
        assert!(
            p.iter().any(|m| m.contains(expected)),
            "not flagged as {expected:?}: {snippet}\n{p:?}"
        );
    }
}

/// Set in the child process of `a_panic_in_a_boundary_aborts_with_its_message`.
const CHILD_ENV: &str = "RTT_AGENT_PANIC_TEST_CHILD";

#[test]
fn a_panic_in_a_boundary_aborts_with_its_message() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "panic_child", "--ignored", "--nocapture"])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = format!(
        "status {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // Died by abort: SIGABRT, not a test failure (exit 101) or a clean exit.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(SIGABRT), "{context}");
    assert!(
        stderr.contains("rt_host_test_panic_in_boundary: deliberate panic"),
        "{context}"
    );
    // The child never got past the call.
    assert!(!stdout.contains("returned"), "{context}");
}

/// SIGABRT on Linux, every architecture the host port runs on.
const SIGABRT: i32 = 6;

#[test]
#[ignore = "run by a_panic_in_a_boundary_aborts_with_its_message in a process of its own"]
fn panic_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    // Through the C ABI, as C would call it; no arguments, so a safe fn.
    let r = rtt_agent::ffi::rt_host_test_panic_in_boundary();
    println!("returned {r}");
}
