//! The library's own declarations of the RT-Thread kernel, device, finsh,
//! ulog and webclient APIs, checked against bindings `bindgen` generates from
//! the C headers:
//!
//! - always: the host port's headers (`host/include/`, x86_64), for the
//!   library's imports (every `extern "C"` block in `src/` outside
//!   `src/host/`) and for the host port's exports (`#[no_mangle] extern "C"`
//!   functions in `src/host/`);
//! - with `RTT_ROOT` set (an RT-Thread 5.x tree): the real `rtthread.h`,
//!   `rtdevice.h`, `finsh.h`, `shell.h`, `ulog.h` (and webclient's
//!   `inc/webclient.h` from `WEBCLIENT_SRC`) with the BSP's `rtconfig.h`
//!   (`RTT_BSP`, default `$RTT_ROOT/bsp/qemu-vexpress-a9`), compiled by
//!   libclang as the board's gcc would: `armv7a-none-eabi`, soft float,
//!   `-fshort-enums`, newlib's headers, the defines of the BSP and of
//!   RT-Thread's newlib SConscript; and a second time as a 64-bit board
//!   (`aarch64-none-elf`, `ARCH_CPU_64BIT`), where `rt_base_t` and `long`
//!   are 64-bit like on the host, against which the host port's exports are
//!   checked too.
//!
//! Every parameter, return type, variadic-ness, every struct that a checked
//! signature reaches (opaque in Rust: must exist in C; with fields: same
//! fields, offsets, size, alignment as clang computed) and every constant of
//! `src/rtt/` that the headers also define must agree, after resolving the
//! aliases on both sides to the integer widths of the target checked.
//!
//! Needs libclang at run time (`apt-get install libclang-dev`;
//! `LIBCLANG_PATH` selects another one) and, for the real headers,
//! newlib's ARM headers (`gcc-arm-none-eabi`; `ARM_NEWLIB_INCLUDE` overrides
//! `/usr/lib/arm-none-eabi/include`).

#[path = "decls/model.rs"]
mod model;

use model::{Compare, Decls, Report, Take, Target};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const HOST: Target = Target {
    name: "host port headers, x86_64",
    pointer_bits: 64,
    long_bits: 64,
};
const ARM32: Target = Target {
    name: "real headers, armv7a-none-eabi (32-bit board)",
    pointer_bits: 32,
    long_bits: 32,
};
const A64: Target = Target {
    name: "real headers, aarch64-none-elf + ARCH_CPU_64BIT, no POSIX stdio (64-bit board)",
    pointer_bits: 64,
    long_bits: 64,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Printed past the test harness's capture, so that "not run" is always seen.
fn say(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "decls: {line}");
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The library's imports: every `extern "C"` block of `src/` outside the host
/// port, with the types of those files and the constants of `src/rtt/`.
fn library_decls() -> Decls {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let host = root().join("src/host");
    let rtt = root().join("src/rtt");
    let mut d = Decls::default();
    for f in files.iter().filter(|f| !f.starts_with(&host)) {
        let text = std::fs::read_to_string(f).unwrap();
        d.add_file(&text, &rel(f), Take::Imports, f.starts_with(&rtt));
    }
    d
}

/// The host port's exports, with the types of `src/rtt/` and `src/host/`.
fn host_port_decls() -> Decls {
    let mut files = Vec::new();
    rust_files(&root().join("src/host"), &mut files);
    rust_files(&root().join("src/rtt"), &mut files);
    let host = root().join("src/host");
    let mut d = Decls::default();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let take = if f.starts_with(&host) {
            Take::Exports
        } else {
            Take::TypesOnly
        };
        d.add_file(&text, &rel(f), take, false);
    }
    d
}

fn bindgen(wrapper: &str, args: &[String]) -> Result<String, String> {
    let mut args = args.to_vec();
    if let Some(builtin) = clang_builtin_include() {
        args.push("-isystem".into());
        args.push(builtin.display().to_string());
    }
    bindgen::Builder::default()
        .header_contents("decls_wrapper.h", wrapper)
        .clang_args(&args)
        .prepend_enum_name(false)
        .generate_comments(false)
        .derive_debug(false)
        .derive_copy(false)
        .formatter(bindgen::Formatter::None)
        .generate()
        .map(|b| b.to_string())
        .map_err(|e| format!("bindgen failed: {e} (clang args: {})", args.join(" ")))
}

/// The compiler's own headers (`stddef.h`, `stdint.h`, ...) of the libclang
/// bindgen loads. libclang finds them through a `clang` program next to it;
/// Debian's libclang-dev ships them (libclang-common-N-dev, under
/// `/usr/lib/llvm-N/lib/clang/<version>/include`) without one, and a board's
/// headers include `stddef.h`, which newlib does not have. `None` when they
/// are not there (then clang's own search applies).
fn clang_builtin_include() -> Option<PathBuf> {
    let major = bindgen::clang_version().parsed?.0;
    let versions = std::fs::read_dir(format!("/usr/lib/llvm-{major}/lib/clang")).ok()?;
    versions
        .filter_map(|v| v.ok().map(|v| v.path().join("include")))
        .find(|inc| inc.join("stddef.h").is_file())
}

/// "file:line: text" of the header line that declares `name`.
fn locate_in(dirs: &[PathBuf], name: &str) -> String {
    let pat = format!("{name}(");
    let pat2 = format!("{name} (");
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "h" || e == "c"))
        {
            let Ok(text) = std::fs::read_to_string(p) else {
                continue;
            };
            for (i, line) in text.lines().enumerate() {
                let t = line.trim_start();
                let decl_like =
                    !t.starts_with("#define") && !t.starts_with("*") && !t.starts_with("//");
                let word_start = |l: &str, pat: &str| {
                    l.find(pat).is_some_and(|at| {
                        at == 0
                            || !l.as_bytes()[at - 1].is_ascii_alphanumeric()
                                && l.as_bytes()[at - 1] != b'_'
                    })
                };
                if decl_like && (word_start(line, &pat) || word_start(line, &pat2)) {
                    return format!("{}:{}: {}", p.display(), i + 1, line.trim());
                }
            }
        }
    }
    "(no header line found)".into()
}

fn print_report(what: &str, target: Target, r: &Report) {
    say(&format!(
        "[{}] {what}: {} functions, {} structs, {} constants compared; {} mismatches",
        target.name,
        r.compared_fns.len(),
        r.compared_structs.len(),
        r.compared_consts.len(),
        r.mismatches.len()
    ));
    say(&format!(
        "[{}]   compared: {}",
        target.name,
        r.compared_fns.join(" ")
    ));
    if !r.not_kernel.is_empty() {
        say(&format!(
            "[{}]   not checked here (C glue, cJSON, tool file: tests/abi.rs; host-only helpers no header declares): {}",
            target.name,
            r.not_kernel.join(" ")
        ));
    }
    for s in &r.skipped_groups {
        say(&format!("[{}]   NOT CHECKED: {s}", target.name));
    }
    for m in &r.mismatches {
        say(&format!("[{}]   MISMATCH {m}", target.name));
    }
}

fn host_include() -> PathBuf {
    root().join("host/include")
}

/// The POSIX file calls of multimodal messages (`src/rtt/file.rs`) are the
/// host C library's own, declared by its `<fcntl.h>` and `<unistd.h>` (on a
/// board: DFS's, under the same names).
const HOST_WRAPPER: &str = "#include <rtthread.h>\n#include <rthw.h>\n#include <rt_host.h>\n#include <finsh.h>\n#include <shell.h>\n#include <msh.h>\n#include <ulog.h>\n#include <webclient.h>\n#include <fcntl.h>\n#include <unistd.h>\n";

fn host_bindings() -> Decls {
    // bindgen's text is generated once; each test parses its own copy
    // (syn's trees are not Sync).
    static B: OnceLock<String> = OnceLock::new();
    let text = B.get_or_init(|| {
        let args = vec![
            format!("-I{}", host_include().display()),
            "--target=x86_64-unknown-linux-gnu".into(),
        ];
        bindgen(HOST_WRAPPER, &args)
            .unwrap_or_else(|e| panic!("{e}\nlibclang is needed: apt-get install libclang-dev"))
    });
    Decls::from_bindgen(text)
}

fn check(
    rust: &Decls,
    c: &Decls,
    target: Target,
    absent: Vec<&'static str>,
    exempt: Vec<&'static str>,
    locate: &dyn Fn(&str) -> String,
) -> Report {
    Compare {
        rust,
        c,
        target,
        absent_groups: absent,
        exempt_prefixes: exempt,
        locate,
    }
    .run()
}

#[test]
fn host_headers() {
    let c = host_bindings();
    let dirs = [host_include()];
    let locate = |n: &str| locate_in(&dirs, n);

    let lib = library_decls();
    let r = check(&lib, &c, HOST, vec![], vec![], &locate);
    print_report("library declarations", HOST, &r);
    let port = host_port_decls();
    let p = check(&port, &c, HOST, vec![], vec!["rt_host_"], &locate);
    print_report("host port definitions", HOST, &p);

    widths(&c, HOST, 64);
    // It must have compared something real, not an empty set.
    for must in [
        "rt_sem_take",
        "rt_mb_recv",
        "rt_thread_create",
        "rt_device_read",
        "rt_device_set_rx_indicate",
        "rt_kprintf",
        "webclient_read",
        "webclient_header_fields_add",
        "rt_mq_recv",
        "open",
        "read",
        "close",
    ] {
        assert!(
            r.compared_fns.iter().any(|f| f == must),
            "{must} was not compared (library)"
        );
    }
    assert!(
        r.compared_fns.len() >= 30,
        "only {} library functions compared",
        r.compared_fns.len()
    );
    assert!(r.compared_structs.iter().any(|s| s == "webclient_session"));
    assert!(r.compared_consts.iter().any(|s| s == "WEBCLIENT_TIMEOUT"));
    assert!(
        p.compared_fns.len() >= 30,
        "only {} host port functions compared",
        p.compared_fns.len()
    );
    let all: Vec<_> = r.mismatches.iter().chain(&p.mismatches).collect();
    assert!(
        all.is_empty(),
        "declarations differ from host/include:\n  {}",
        all.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

/// The real tree's include directories for rtthread.h and friends.
fn real_include_dirs(rtt: &Path, bsp: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![bsp.to_path_buf(), bsp.join("drivers")];
    for d in [
        "include",
        "libcpu/arm/common",
        "libcpu/arm/cortex-a",
        "components/legacy",
        "components/finsh",
        "components/drivers/include",
        "components/utilities/ulog",
        "components/libc/compilers/newlib",
        "components/libc/compilers/common/include",
        "components/libc/posix/io/poll",
        "components/libc/posix/io/stdio",
        "components/libc/posix/ipc",
        "components/dfs/dfs_v1/include",
    ] {
        dirs.push(rtt.join(d));
    }
    dirs.retain(|d| d.is_dir());
    dirs
}

/// Prototypes for the webclient functions we declare that webclient.h does
/// not (webclient_handle_response), read off src/webclient.c's definitions.
fn prototypes_from_source(webclient: &Path, lib: &Decls) -> (String, Vec<String>) {
    let header = std::fs::read_to_string(webclient.join("inc/webclient.h")).unwrap_or_default();
    let Ok(src) = std::fs::read_to_string(webclient.join("src/webclient.c")) else {
        return (String::new(), vec![]);
    };
    let lines: Vec<&str> = src.lines().collect();
    let (mut protos, mut notes) = (String::new(), Vec::new());
    let names: std::collections::BTreeSet<&String> = lib.fns.values().map(|f| &f.name).collect();
    for name in names.into_iter().filter(|n| n.starts_with("webclient_")) {
        if header.contains(&format!("{name}(")) {
            continue;
        }
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if t.starts_with("static")
                || t.starts_with('#')
                || l.starts_with(' ')
                || l.starts_with('\t')
            {
                continue;
            }
            if let Some(at) = l
                .find(&format!(" {name}("))
                .or_else(|| l.find(&format!("*{name}(")))
            {
                let _ = at;
                let mut text = String::new();
                for l2 in &lines[i..] {
                    text.push_str(l2.trim());
                    text.push(' ');
                    if l2.contains(')') {
                        break;
                    }
                }
                if let Some(close) = text.rfind(')') {
                    protos.push_str(&format!(
                        "/* {}:{} */\n{};\n",
                        "src/webclient.c",
                        i + 1,
                        &text[..=close]
                    ));
                    notes.push(format!(
                        "{name}: not in webclient.h; prototype from src/webclient.c:{}: {}",
                        i + 1,
                        l.trim()
                    ));
                }
                break;
            }
        }
    }
    (protos, notes)
}

/// The headers were read for the target meant: the pointer-sized kernel
/// types have the width of `bits`, the fixed ones keep theirs.
fn widths(c: &Decls, target: Target, bits: u32) {
    use model::Ty;
    let ty = |name: &str| c.canon(&syn::parse_str(name).unwrap(), target);
    assert_eq!(
        ty("rt_base_t"),
        Ty::Int { signed: true, bits },
        "[{}] rt_base_t",
        target.name
    );
    assert_eq!(
        ty("rt_ubase_t"),
        Ty::Int {
            signed: false,
            bits
        },
        "[{}] rt_ubase_t",
        target.name
    );
    assert_eq!(
        ty("rt_size_t"),
        Ty::Int {
            signed: false,
            bits
        },
        "[{}] rt_size_t",
        target.name
    );
    assert_eq!(
        ty("rt_int32_t"),
        Ty::Int {
            signed: true,
            bits: 32
        },
        "[{}] rt_int32_t",
        target.name
    );
    assert_eq!(
        ty("rt_tick_t"),
        Ty::Int {
            signed: false,
            bits: 32
        },
        "[{}] rt_tick_t",
        target.name
    );
}

/// libclang stands in for the board's gcc: where arm-none-eabi-gcc is
/// installed, it must give the sizes clang gave for the kernel objects and
/// the webclient session, with the same flags (-march as the BSP's
/// rtconfig.py).
fn gcc_agrees(wrapper: &str, args: &[String], c: &Decls) {
    let gcc = std::env::var("ARM_GCC").unwrap_or_else(|_| "arm-none-eabi-gcc".into());
    let names = [
        "rt_thread",
        "rt_semaphore",
        "rt_mutex",
        "rt_mailbox",
        "rt_device",
        "webclient_session",
    ];
    let mut prog = format!("{wrapper}\n");
    let mut n = 0;
    for name in names {
        if let Some(size) = c.layout.get(&format!("Size of {name}")) {
            prog.push_str(&format!("_Static_assert(sizeof(struct {name}) == {size}, \"struct {name}: clang says {size}\");\n"));
            n += 1;
        }
    }
    let dir = root().join("target/decls");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gcc_agrees.c");
    std::fs::write(&file, prog).unwrap();
    let out = std::process::Command::new(&gcc)
        .args(["-fsyntax-only", "-march=armv7-a", "-msoft-float"])
        .args(args)
        .arg(&file)
        .output();
    match out {
        Err(_) => say(&format!(
            "NOT RUN: {gcc} not found, so clang's board layouts were not cross-checked with gcc"
        )),
        Ok(o) => {
            assert!(
                o.status.success(),
                "{gcc} disagrees with libclang's layouts ({}):\n{}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            say(&format!("{gcc} agrees with libclang on the size of {n} structs (rt_thread, rt_device, webclient_session, ...)"));
        }
    }
}

/// Ignored unless asked for (`cargo test --test decls -- --ignored`, which
/// `tests/run-all` does when RTT_ROOT is set), so that without the real tree
/// it shows as ignored, never as passed; asked for without RTT_ROOT it fails.
#[test]
#[ignore = "needs RTT_ROOT (an RT-Thread 5.x tree) and WEBCLIENT_SRC; tests/run-all runs it when RTT_ROOT is set"]
fn real_headers() {
    let Some(rtt) = std::env::var_os("RTT_ROOT").map(PathBuf::from) else {
        panic!("the check against the real RT-Thread/webclient headers needs RTT_ROOT (an RT-Thread 5.x tree) and WEBCLIENT_SRC (the webclient package)");
    };
    assert!(
        rtt.join("include/rtthread.h").is_file(),
        "RTT_ROOT={} has no include/rtthread.h",
        rtt.display()
    );
    let bsp = std::env::var_os("RTT_BSP")
        .map(PathBuf::from)
        .unwrap_or_else(|| rtt.join("bsp/qemu-vexpress-a9"));
    assert!(
        bsp.join("rtconfig.h").is_file(),
        "{} has no rtconfig.h (set RTT_BSP)",
        bsp.display()
    );
    let newlib = std::env::var_os("ARM_NEWLIB_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/arm-none-eabi/include"));
    assert!(newlib.join("stdint.h").is_file(), "newlib's headers not found at {} (apt-get install gcc-arm-none-eabi, or set ARM_NEWLIB_INCLUDE)", newlib.display());

    let webclient = std::env::var_os("WEBCLIENT_SRC")
        .map(PathBuf::from)
        .or_else(|| {
            // As the env tool lays it out: <BSP>/packages/webclient-<version>/.
            std::fs::read_dir(bsp.join("packages"))
                .ok()?
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("webclient"))
                        && p.join("inc/webclient.h").is_file()
                })
        });
    let lib = library_decls();
    let mut dirs = real_include_dirs(&rtt, &bsp);
    let mut wrapper = String::from(
        "#include <rtthread.h>\n#include <rthw.h>\n#include <rtdevice.h>\n#include <ulog.h>\n#ifdef RT_USING_FINSH\n#include <finsh.h>\n#include <shell.h>\n#endif\n#include <fcntl.h>\n#include <unistd.h>\n",
    );
    let mut absent = vec![];
    let mut notes = vec![];
    match &webclient {
        Some(w) => {
            assert!(
                w.join("inc/webclient.h").is_file(),
                "WEBCLIENT_SRC={} has no inc/webclient.h",
                w.display()
            );
            dirs.push(w.join("inc"));
            dirs.push(w.join("src"));
            wrapper.push_str("#include <webclient.h>\n");
            let (protos, n) = prototypes_from_source(w, &lib);
            wrapper.push_str(&protos);
            notes = n;
        }
        None => {
            say("NOT RUN: webclient's declarations (WEBCLIENT_SRC is not set and no <BSP>/packages/webclient*/ was found)");
            absent.push("webclient_");
        }
    }
    say(&format!(
        "real headers: RTT_ROOT={} BSP={} webclient={}",
        rtt.display(),
        bsp.display(),
        webclient
            .as_ref()
            .map_or("-".into(), |w| w.display().to_string())
    ));
    for n in &notes {
        say(&format!("  {n}"));
    }

    let mut common: Vec<String> = vec![
        "-std=gnu99".into(),
        // rtconfig.py's CFLAGS and RT-Thread's components/libc/compilers/newlib/SConscript
        "-D_POSIX_SOURCE".into(),
        "-DO_DIRECTORY=0".into(),
        "-DRT_USING_NEWLIBC".into(),
        "-DRT_USING_LIBC".into(),
        "-D_POSIX_C_SOURCE=1".into(),
    ];
    common.extend(dirs.iter().map(|d| format!("-I{}", d.display())));
    common.push("-isystem".into());
    common.push(newlib.display().to_string());
    let locate = |n: &str| locate_in(&dirs, n);

    let mut failures = Vec::new();
    // The board itself: 32-bit ARM, gcc's bare-metal defaults.
    let mut a32 = vec![
        "--target=armv7a-none-eabi".to_string(),
        "-mfloat-abi=soft".into(),
        "-fshort-enums".into(),
    ];
    a32.extend(common.iter().cloned());
    let c32 = Decls::from_bindgen(&bindgen(&wrapper, &a32).unwrap());
    widths(&c32, ARM32, 32);
    gcc_agrees(&wrapper, &common[..common.len() - 2], &c32); // without newlib's -isystem: gcc has its own
    let r32 = check(&lib, &c32, ARM32, absent.clone(), vec![], &locate);
    print_report("library declarations", ARM32, &r32);
    failures.extend(
        r32.mismatches
            .iter()
            .map(|m| format!("[{}] {m}", ARM32.name)),
    );
    assert!(
        r32.compared_fns.len() >= 25,
        "only {} functions compared against the real headers",
        r32.compared_fns.len()
    );

    // The same configuration as a 64-bit CPU: catches an rt_int32_t where
    // the kernel has rt_base_t (same width on the board above), and checks
    // the host port (LP64 too) against the real signatures.
    // The host port models a console without POSIX stdio (host/include's
    // rtconfig.h): the real finsh.h declares finsh_set_device only then, so
    // this run takes the BSP's rtconfig.h with RT_USING_POSIX_STDIO undone.
    let shim = root().join("target/decls/rtconfig-64");
    std::fs::create_dir_all(&shim).unwrap();
    std::fs::write(
        shim.join("rtconfig.h"),
        format!(
            "/* generated by tests/decls.rs */\n#ifndef DECLS_RTCONFIG_SHIM\n#define DECLS_RTCONFIG_SHIM\n#include \"{}\"\n#undef RT_USING_POSIX_STDIO\n#endif\n",
            bsp.join("rtconfig.h").display()
        ),
    )
    .unwrap();
    let mut a64 = vec![
        "--target=aarch64-none-elf".to_string(),
        "-DARCH_CPU_64BIT".into(),
        format!("-I{}", shim.display()),
    ];
    a64.extend(common.iter().cloned());
    let c64 = Decls::from_bindgen(&bindgen(&wrapper, &a64).unwrap());
    widths(&c64, A64, 64);
    let r64 = check(&lib, &c64, A64, absent.clone(), vec![], &locate);
    print_report("library declarations", A64, &r64);
    failures.extend(r64.mismatches.iter().map(|m| format!("[{}] {m}", A64.name)));
    let port = host_port_decls();
    let p64 = check(&port, &c64, A64, absent.clone(), vec!["rt_host_"], &locate);
    print_report("host port definitions", A64, &p64);
    failures.extend(
        p64.mismatches
            .iter()
            .map(|m| format!("[{}] host port: {m}", A64.name)),
    );

    assert!(
        failures.is_empty(),
        "declarations differ from the real headers:\n  {}",
        failures.join("\n  ")
    );
}

/// Deliberately wrong declarations, run through the same comparison against
/// the host headers, must each be reported; the right ones must not.
#[test]
fn negative_control() {
    let c = host_bindings();
    let kernel = std::fs::read_to_string(root().join("src/rtt/kernel.rs")).unwrap();
    let run = |decls: &str| {
        let mut d = Decls::default();
        d.add_file(&kernel, "src/rtt/kernel.rs", Take::TypesOnly, false);
        d.add_file(decls, "control", Take::Imports, true);
        let dirs = [host_include()];
        check(&d, &c, HOST, vec![], vec![], &|n| locate_in(&dirs, n))
    };
    let prelude =
        "use core::ffi::*; #[repr(C)] pub struct webclient_session { _private: [u8; 0] }\n";
    let wrong: &[(&str, &str)] = &[
        ("rt_sem_take", "extern \"C\" { fn rt_sem_take(sem: rt_sem_t, timeout: rt_base_t) -> rt_err_t; }"),
        ("rt_device_read", "extern \"C\" { fn rt_device_read(dev: rt_device_t, pos: rt_size_t, buffer: *mut c_void, size: rt_size_t) -> rt_ssize_t; }"),
        ("rt_device_read", "extern \"C\" { fn rt_device_read(dev: rt_device_t, pos: rt_off_t, buffer: *mut c_void, size: u32) -> rt_ssize_t; }"),
        ("webclient_read", "extern \"C\" { fn webclient_read(s: *mut webclient_session, buffer: *mut c_void, size: usize) -> isize; }"),
        ("webclient_header_fields_get", "extern \"C\" { fn webclient_header_fields_get(s: *mut webclient_session, f: *const c_char) -> *mut c_char; }"),
        ("rt_kprintf", "extern \"C\" { fn rt_kprintf(fmt: *const c_char) -> c_int; }"),
        ("rt_mb_recv", "extern \"C\" { fn rt_mb_recv(mb: rt_mailbox_t, value: *mut rt_ubase_t) -> rt_err_t; }"),
        ("rt_device_set_rx_indicate", "extern \"C\" { fn rt_device_set_rx_indicate(dev: rt_device_t, rx: Option<unsafe extern \"C\" fn(dev: rt_device_t, size: u32) -> rt_err_t>) -> rt_err_t; }"),
        ("rt_thread_self", "extern \"C\" { fn rt_thread_self() -> rt_sem_t; }"),
        ("rt_no_such_function", "extern \"C\" { fn rt_no_such_function(); }"),
        ("WEBCLIENT_TIMEOUT", "pub const WEBCLIENT_TIMEOUT: c_int = 3;"),
        ("struct rt_no_such_object", "#[repr(C)] pub struct rt_no_such_object { _private: [u8; 0] } extern \"C\" { fn rt_mb_delete(mb: *mut rt_no_such_object) -> rt_err_t; }"),
    ];
    for (i, (what, decl)) in wrong.iter().enumerate() {
        let r = run(&format!("{prelude}{decl}"));
        if i == 0 {
            say(&format!(
                "negative control, as reported: {}",
                r.mismatches.join(" | ")
            ));
        }
        assert!(
            r.mismatches.iter().any(|m| m.contains(what)),
            "the wrong declaration of {what} was not reported: {decl}\n  report: {:?}",
            r.mismatches
        );
    }
    // The same functions declared right: no mismatch (so the above are not
    // reported for some unrelated reason).
    let right = "extern \"C\" { fn rt_sem_take(sem: rt_sem_t, timeout: rt_int32_t) -> rt_err_t;
        fn rt_device_read(dev: rt_device_t, pos: rt_off_t, buffer: *mut c_void, size: rt_size_t) -> rt_ssize_t;
        fn webclient_read(s: *mut webclient_session, buffer: *mut c_void, size: usize) -> c_int;
        fn rt_kprintf(fmt: *const c_char, ...) -> c_int; }
        pub const WEBCLIENT_TIMEOUT: c_int = 2;";
    let r = run(&format!("{prelude}{right}"));
    assert!(
        r.mismatches.is_empty(),
        "right declarations reported: {:?}",
        r.mismatches
    );
    assert_eq!(r.compared_fns.len(), 4);

    // Layouts: a struct with fields, declared right and wrong.
    let ctl_h = "#include <stddef.h>\nstruct rt_ctl { char *p; int a; size_t n; short s; };\nint rt_ctl_use(struct rt_ctl *c, long x);\n";
    let ctl = Decls::from_bindgen(
        &bindgen(ctl_h, &["--target=x86_64-unknown-linux-gnu".to_string()]).unwrap(),
    );
    assert_eq!(
        ctl.layout.get("Size of rt_ctl"),
        Some(&32),
        "bindgen's layout assertions not read"
    );
    let layout_run = |decls: &str| {
        let mut d = Decls::default();
        d.add_file(decls, "control", Take::Imports, false);
        check(&d, &ctl, HOST, vec![], vec![], &|_| String::new())
    };
    let good = "use core::ffi::*; #[repr(C)] pub struct rt_ctl { p: *mut c_char, a: c_int, n: usize, s: i16 }
        extern \"C\" { fn rt_ctl_use(c: *mut rt_ctl, x: c_long) -> c_int; }";
    let r = layout_run(good);
    assert!(
        r.mismatches.is_empty(),
        "right struct reported: {:?}",
        r.mismatches
    );
    assert_eq!(r.compared_structs, ["rt_ctl"]);
    for bad in [
        "#[repr(C)] pub struct rt_ctl { p: *mut c_char, a: c_int, n: u32, s: i16 }",
        "#[repr(C)] pub struct rt_ctl { p: *mut c_char, a: c_int, n: usize }",
        "#[repr(C)] pub struct rt_ctl { p: *mut c_char, a: i64, n: usize, s: i16 }",
    ] {
        let r = layout_run(&format!("use core::ffi::*; {bad} extern \"C\" {{ fn rt_ctl_use(c: *mut rt_ctl, x: c_long) -> c_int; }}"));
        assert!(
            r.mismatches.iter().any(|m| m.starts_with("struct rt_ctl")),
            "wrong layout not reported: {bad}: {:?}",
            r.mismatches
        );
    }
    say("negative control: every deliberately wrong declaration was reported as a mismatch");
}
