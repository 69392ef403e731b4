//! The package's SConscript inside an RT-Thread build: runs
//! `tests/scons/run.sh`, which reads the real `SConscript` under real SCons
//! with stand-ins for RT-Thread's `building` module, three boards'
//! `rtconfig.py` (Cortex-M4F hard float, qemu-vexpress-a9 soft float, RV32)
//! and cargo, and checks the chosen Rust target, the cargo invocation, the
//! returned group, `scons -c`, the clear errors, and `packages/Kconfig`.
//! Takes a few seconds; installs scons and kconfiglib when missing.
//!
//! The cross builds, link check and size report are `tests/cross/run.sh`.

use std::path::Path;
use std::process::Command;

#[test]
fn sconscript_under_scons_with_stand_in_boards() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("tests/scons/run.sh"))
        .current_dir(root)
        // cargo sets these for test processes; the stand-in BSPs pick their
        // own cargo and rustc.
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run bash tests/scons/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "tests/scons/run.sh failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "no summary line from run_tests.py:\n{stdout}"
    );
}
