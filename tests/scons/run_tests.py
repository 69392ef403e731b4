#!/usr/bin/python3
"""Runs the package's real SConscript under real SCons in stand-in BSPs.

Each case makes a temporary BSP folder (SConstruct, the board's rtconfig.py,
packages/Agent -> this repository), runs `scons` with RT-Thread's `building`
module replaced by tests/scons/building.py and cargo/rustc replaced by the
recording stand-ins in tests/scons/fake-bin, then checks the Rust target, the
cargo invocation and the group the SConscript returned. A last case loads
packages/Kconfig with kconfiglib.

Usage: run_tests.py [-v] [-k SUBSTRING]   (prints "N passed, N failed")
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FAKE_BIN = os.path.join(HERE, 'fake-bin')
PYTHON = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else sys.executable
SCONS = shutil.which('scons', path='/usr/bin:' + os.environ.get('PATH', '')) or 'scons'
VERBOSE = '-v' in sys.argv

RUSTFLAGS_BASE = ['-C', 'opt-level=z', '-C', 'panic=abort', '-C', 'relocation-model=static']


class Run:
    pass


def expected_sources(pkg, mqtt=False):
    """Every .c under src/tools/ (tool_mqtt/ only with its option), then
    src/tool_func.c and the glue, in the SConscript's order."""
    files = []
    for here, dirs, names in os.walk(os.path.join(pkg, 'src', 'tools')):
        dirs[:] = [d for d in dirs if d != 'tool_mqtt' or mqtt]
        files += [os.path.join(here, n) for n in names if n.endswith('.c')]
    return (sorted(files) + [os.path.join(pkg, 'src', 'tool_func.c')]
            + sorted(glob.glob(os.path.join(pkg, 'glue', '*.c'))))


def expected_cpppath(pkg, extra_tools=(), extra_drivers=('audio',)):
    return ([os.path.join(pkg, 'include'), os.path.join(pkg, 'include', 'tools')]
            + [os.path.join(pkg, 'include', 'tools', d) for d in extra_tools]
            + [os.path.join(pkg, 'include', 'channels')]
            + [os.path.join(pkg, 'include', 'driver', d) for d in extra_drivers]
            + [os.path.join(pkg, 'glue')])


def make_sysroot(root, installed=(), rust_src=True):
    os.makedirs(os.path.join(root, 'lib', 'rustlib'), exist_ok=True)
    for t in installed:
        os.makedirs(os.path.join(root, 'lib', 'rustlib', t, 'lib'), exist_ok=True)
    if rust_src:
        os.makedirs(os.path.join(root, 'lib', 'rustlib', 'src', 'rust', 'library', 'core'), exist_ok=True)
    return root


def scons(board, config=None, drop=(), env=None, args=(), path=None, installed=(), rust_src=True,
          rtconfig_py=None, bsp=None):
    """Run scons in a stand-in BSP for `board`; returns a Run."""
    r = Run()
    r.tmp = tempfile.mkdtemp(prefix='rtt-agent-scons-')
    r.bsp = bsp or os.path.join(r.tmp, 'bsp')
    if not bsp:
        os.makedirs(os.path.join(r.bsp, 'packages'))
        shutil.copy(os.path.join(HERE, 'SConstruct.bsp'), os.path.join(r.bsp, 'SConstruct'))
        if rtconfig_py is not None:
            with open(os.path.join(r.bsp, 'rtconfig.py'), 'w') as f:
                f.write(rtconfig_py)
        else:
            shutil.copy(os.path.join(HERE, 'boards', board, 'rtconfig.py'), r.bsp)
        os.symlink(REPO, os.path.join(r.bsp, 'packages', 'Agent'))
    r.pkg = os.path.join(r.bsp, 'packages', 'Agent')
    with open(os.path.join(HERE, 'boards', board, 'config.json')) as f:
        cfg = json.load(f)
    for k in drop:
        cfg.pop(k, None)
    cfg.update(config or {})
    r.config_path = os.path.join(r.tmp, 'config.json')
    with open(r.config_path, 'w') as f:
        json.dump(cfg, f)
    r.record_path = os.path.join(r.tmp, 'record.json')
    r.cargo_log = os.path.join(r.tmp, 'cargo.jsonl')
    r.objcopy_log = os.path.join(r.tmp, 'objcopy.jsonl')
    sysroot = make_sysroot(os.path.join(r.tmp, 'sysroot'), installed, rust_src)

    e = {k: v for k, v in os.environ.items()
         if k not in ('CARGO', 'RUSTC', 'RUSTFLAGS', 'CARGO_ENCODED_RUSTFLAGS', 'RUSTC_BOOTSTRAP',
                      'CARGO_TARGET_DIR', 'RUSTUP_TOOLCHAIN', 'CARGO_BUILD_TARGET')}
    e.update({
        'PATH': FAKE_BIN if path is None else path,
        'RTT_STANDIN_DIR': HERE,
        'RTT_STANDIN_CONFIG': r.config_path,
        'RTT_STANDIN_RECORD': r.record_path,
        'FAKE_CARGO_LOG': r.cargo_log,
        'FAKE_OBJCOPY_LOG': r.objcopy_log,
        'RTT_EXEC_PATH': FAKE_BIN,
        'FAKE_RUSTC_SYSROOT': sysroot,
        'PYTHONDONTWRITEBYTECODE': '1',
    })
    e.update(env or {})
    p = subprocess.run([PYTHON, SCONS, '-Q', '--no-cache'] + list(args), cwd=r.bsp, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    r.rc, r.out, r.err = p.returncode, p.stdout, p.stderr
    r.records = json.load(open(r.record_path)) if os.path.exists(r.record_path) else []
    r.calls = [json.loads(l) for l in open(r.cargo_log)] if os.path.exists(r.cargo_log) else []
    r.objcopy = [json.loads(l) for l in open(r.objcopy_log)] if os.path.exists(r.objcopy_log) else []
    if VERBOSE:
        print('--- scons %s rc=%d\n%s%s' % (board, r.rc, r.out, r.err))
    return r


def cleanup(r):
    shutil.rmtree(r.tmp, ignore_errors=True)


def check(cond, what, r=None):
    if not cond:
        detail = ''
        if r is not None:
            detail = '\n  rc=%s\n  stdout:\n%s\n  stderr:\n%s\n  cargo calls: %s\n  records: %s' % (
                r.rc, r.out, r.err, json.dumps(r.calls, indent=1), json.dumps(r.records, indent=1))
        raise AssertionError(what + detail)


def check_success(r, target, build_std, features=('channel-cli',), extra_flags=()):
    check(r.rc == 0, 'scons failed', r)
    check(len(r.calls) == 1, 'cargo should run exactly once', r)
    c = r.calls[0]
    want = ['rustc', '--lib', '--release', '--target', target, '--no-default-features',
            '--manifest-path', os.path.join(r.pkg, 'Cargo.toml'), '--crate-type', 'staticlib']
    if features:
        want += ['--features', ','.join(features)]
    if build_std:
        want += ['-Zbuild-std=core,alloc', '-Zbuild-std-features=optimize_for_size']
    check(c['argv'] == want, 'cargo arguments: got %r, want %r' % (c['argv'], want), r)
    check(os.path.realpath(c['cwd']) == os.path.realpath(REPO), 'cargo runs in the package folder', r)
    flags = c['env'].get('RUSTFLAGS', '').split()
    size_flags = ['-Zlocation-detail=none', '-Zfmt-debug=none'] if build_std else []
    tail = len(RUSTFLAGS_BASE) + (2 if target.startswith('riscv') else 0) + len(extra_flags) + len(size_flags)
    check(flags[-tail:][:len(RUSTFLAGS_BASE)] == RUSTFLAGS_BASE, 'RUSTFLAGS %r lack %r' % (flags, RUSTFLAGS_BASE), r)
    check(flags[len(flags) - len(size_flags):] == size_flags, 'size flags only with -Zbuild-std: %r' % flags, r)
    check(flags[len(flags) - len(size_flags) - len(extra_flags):len(flags) - len(size_flags)] == list(extra_flags),
          'RUSTFLAGS %r lack %r' % (flags, extra_flags), r)
    target_dir = os.path.join(r.bsp, 'build', 'rtt_agent')
    check(c['env'].get('CARGO_TARGET_DIR') == target_dir, 'CARGO_TARGET_DIR is under the BSP build folder', r)
    if build_std:
        check(c['env'].get('RUSTC_BOOTSTRAP') == '1', '-Zbuild-std needs RUSTC_BOOTSTRAP=1', r)
    else:
        check('RUSTC_BOOTSTRAP' not in c['env'], 'no RUSTC_BOOTSTRAP without -Zbuild-std', r)
    check(c['env'].get('RUSTC') == os.path.join(FAKE_BIN, 'rustc'), 'cargo is given the rustc next to it', r)
    groups = [g for g in r.records if g['name'] == 'Agent']
    check(len(groups) == 1, 'one Agent group', r)
    g = groups[0]
    check(g['built'] and g['depend'] == ['PKG_USING_AGENT'], 'group depends on PKG_USING_AGENT', r)
    check(sorted(g['src']) == sorted(expected_sources(r.pkg)), 'group sources: %r' % g['src'], r)
    p = g['parameters']
    check(p.get('CPPPATH') == expected_cpppath(r.pkg), 'CPPPATH %r' % p.get('CPPPATH'), r)
    check(p.get('LIBS') == ['rtt_agent'], 'LIBS %r' % p.get('LIBS'), r)
    # The linked archive is a copy whose mem* symbols the board's C library
    # provides (tools/board_mem.py), made with the board's own objcopy.
    board_mem = os.path.join(target_dir, target, 'board-mem')
    check(p.get('LIBPATH') == [board_mem], 'LIBPATH %r' % p.get('LIBPATH'), r)
    prefix = 'riscv64-unknown-elf-' if target.startswith('riscv') else 'arm-none-eabi-'
    check(len(r.objcopy) == 1 and r.objcopy[0][0] == prefix + 'objcopy', 'objcopy calls %r' % r.objcopy, r)
    check('--localize-symbol=memcpy' in r.objcopy[0] and '--localize-symbol=strlen' in r.objcopy[0]
          and r.objcopy[0][-1] == os.path.join(board_mem, 'librtt_agent.a'), 'objcopy arguments %r' % r.objcopy, r)
    check(os.path.isfile(os.path.join(board_mem, 'librtt_agent.a')), 'the copy exists', r)
    return c


# ----------------------------------------------------------------- the cases

def test_cortex_m4f_hard_float_installed_target():
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'])
    check_success(r, 'thumbv7em-none-eabihf', build_std=False)
    check('Rust library for thumbv7em-none-eabihf' in r.out, 'the chosen target is printed', r)
    cleanup(r)


def test_qemu_vexpress_a9_soft_float_build_std():
    # Cortex-A gets Thumb-2 code (the board's C stays A32) when rustc can build it.
    r = scons('qemu-vexpress-a9', installed=['thumbv7em-none-eabihf'])
    check_success(r, 'thumbv7a-none-eabi', build_std=True)
    check('A32 code' not in r.out and 'Thumb-2 code for this Cortex-A/R board (thumbv7a-none-eabi' in r.out,
          'the switch is printed', r)
    cleanup(r)


def test_cortex_a_stays_a32_when_thumb2_cannot_be_built():
    # An older rustc without the Thumb-2 twin: A32 code, and the build says why.
    r = scons('qemu-vexpress-a9', env={'FAKE_RUSTC_TARGETS': 'armv7a-none-eabi armv7a-none-eabihf'})
    check_success(r, 'armv7a-none-eabi', build_std=True)
    check('building A32 code for armv7a-none-eabi' in r.out and 'no thumbv7a-none-eabi target' in r.out,
          'the reason is printed', r)
    cleanup(r)
    # rustup with armv7a-none-eabi installed but no library sources: the
    # Thumb-2 twin (tier 3) would need -Zbuild-std.
    r = scons('qemu-vexpress-a9', installed=['armv7a-none-eabi'], rust_src=False)
    check_success(r, 'armv7a-none-eabi', build_std=False)
    check('needs -Zbuild-std' in r.out, 'the reason is printed', r)
    cleanup(r)
    # A rustup that has the Thumb-2 twin itself needs no library sources.
    r = scons('qemu-vexpress-a9', installed=['armv7a-none-eabi', 'thumbv7a-none-eabi'], rust_src=False)
    check_success(r, 'thumbv7a-none-eabi', build_std=False)
    check('A32 code' not in r.out, 'no A32 note', r)
    cleanup(r)
    # The board's own choice wins.
    r = scons('qemu-vexpress-a9', config={'PKG_AGENT_RUST_TARGET': '"armv7a-none-eabi"'})
    check_success(r, 'armv7a-none-eabi', build_std=True)
    check('A32 code' not in r.out, 'no note for a chosen target', r)
    cleanup(r)


def test_riscv32_imac_build_std():
    r = scons('gd32vf103-rv32')
    c = check_success(r, 'riscv32imac-unknown-none-elf', build_std=True)
    check(c['env']['RUSTFLAGS'].split()[-4:-2] == ['-C', 'code-model=medium'], 'RISC-V code model', r)
    cleanup(r)


def test_kconfig_choices_become_cargo_features():
    """Each optional part chosen in menuconfig reaches cargo as its feature, in Cargo.toml's order;
    the C package's choices give the CLI channel alone (menuconfig's default adds the argument check)."""
    cases = [
        ({}, (), ('channel-cli',)),
        ({'PKG_AGENT_CLI_HISTORY': '', 'PKG_AGENT_MSH_EXTRAS': ''}, (),
         ('channel-cli', 'cli-history', 'msh-extras')),
        ({'PKG_AGENT_DEBUG_CHANNEL': ''}, ('PKG_AGENT_CLI_CHANNEL',), ('channel-debug',)),
        ({'PKG_AGENT_DEBUG_CHANNEL': '', 'PKG_AGENT_MSH_EXTRAS': ''}, ('PKG_AGENT_CLI_CHANNEL',),
         ('channel-debug', 'msh-extras')),
        ({'PKG_AGENT_WEBNET_CHANNEL': ''}, ('PKG_AGENT_CLI_CHANNEL',), ('channel-webnet',)),
        # Extra channels next to the chosen one: their features, once each.
        ({'PKG_AGENT_ALSO_WEBNET_CHANNEL': '', 'PKG_AGENT_ALSO_DEBUG_CHANNEL': ''}, (),
         ('channel-cli', 'channel-debug', 'channel-webnet')),
        ({'PKG_AGENT_DEBUG_CHANNEL': '', 'PKG_AGENT_ALSO_WEBNET_CHANNEL': ''}, ('PKG_AGENT_CLI_CHANNEL',),
         ('channel-debug', 'channel-webnet')),
        ({'PKG_AGENT_CHECK_TOOL_ARGS': ''}, (), ('channel-cli', 'tool-arg-check')),
        ({'PKG_AGENT_SUMMARY': ''}, (), ('channel-cli', 'memory-summary')),
        ({'PKG_AGENT_TOOLS_TEXT': '', 'PKG_AGENT_MSH_EXTRAS': ''}, (), ('channel-cli', 'msh-extras', 'tools-text')),
        ({'PKG_AGENT_PROVIDER_ANTHROPIC': '', 'PKG_AGENT_PROVIDER_OLLAMA': ''}, (),
         ('channel-cli', 'provider-anthropic', 'provider-ollama')),
        ({'PKG_AGENT_MCP_SERVER': ''}, (), ('channel-cli', 'mcp-server')),
        ({'PKG_AGENT_MCP_CLIENT': '', 'PKG_AGENT_MCP_SERVERS': '"http://10.0.0.5:8000/mcp"',
          'PKG_AGENT_MSH_EXTRAS': ''}, (), ('channel-cli', 'msh-extras', 'mcp-client')),
        ({'PKG_AGENT_MULTIMODAL_ENABLE': '', 'PKG_AGENT_WEBNET_CHANNEL': ''},
         ('PKG_AGENT_CLI_CHANNEL', 'PKG_AGENT_MULTIMODAL_DISABLE'), ('channel-webnet', 'multimodal')),
        ({}, ('PKG_AGENT_CLI_CHANNEL',), ()),
    ]
    cargo_toml = open(os.path.join(REPO, 'Cargo.toml')).read()
    for config, drop, features in cases:
        for f in features:
            check(('\n%s = ' % f) in cargo_toml, 'Cargo.toml declares the feature %s' % f)
        r = scons('stm32f407-m4f', config=config, drop=drop, installed=['thumbv7em-none-eabihf'])
        check_success(r, 'thumbv7em-none-eabihf', build_std=False, features=features)
        cleanup(r)


def test_https_through_webclient_links_the_tls_glue():
    """With HTTPS through webclient's mbedTLS mode the group links the glue's
    mbedtls_client_* in place of the package's (--wrap), passes the RNG
    function and the outgoing record buffer as defines, and warns when
    mbedTLS's records are smaller than a server may send; without it,
    none of that."""
    tls = {'PKG_AGENT_TLS_MBEDTLS': '', 'WEBCLIENT_USING_MBED_TLS': '', 'PKG_USING_MBEDTLS': '',
           'PKG_AGENT_TLS_OUT_CONTENT_LEN': '2048', 'PKG_AGENT_TLS_RNG_FUNC': '"board_rng"',
           'PKG_AGENT_TLS_LEAN_MBEDTLS': ''}
    for record, warned in (('3584', True), ('16384', False)):
        config = dict(tls, MBEDTLS_SSL_MAX_CONTENT_LEN=record)
        r = scons('stm32f407-m4f', config=config, installed=['thumbv7em-none-eabihf'])
        check_success(r, 'thumbv7em-none-eabihf', build_std=False, features=('channel-cli', 'tls'))
        p = [g for g in r.records if g['name'] == 'Agent'][0]['parameters']
        wraps = ['--wrap=mbedtls_client_%s' % f for f in ('init', 'context', 'connect', 'read')]
        check(all(w in p.get('LINKFLAGS', '') for w in wraps), 'LINKFLAGS %r' % p.get('LINKFLAGS'), r)
        defines = p.get('CPPDEFINES', [])
        local = p.get('LOCAL_CPPDEFINES', [])
        check('AGENT_TLS_RNG_FUNC=board_rng' in local, 'the RNG function reaches the glue: %r' % local, r)
        check(any(d.startswith('AGENT_TLS_CLOCK_EPOCH=') for d in local), 'the clock epoch: %r' % local, r)
        check('MBEDTLS_SSL_OUT_CONTENT_LEN=2048' in defines, 'the outgoing buffer, for mbedTLS too: %r' % defines, r)
        check(not any(d.startswith('AGENT_TLS_') for d in defines), 'nothing of the glue\'s for the whole build', r)
        check('MBEDTLS_USER_CONFIG_FILE=\\"agent_mbedtls_lean.h\\"' in defines,
              'the recommended mbedTLS configuration, for mbedTLS: %r' % defines, r)
        check(('MBEDTLS_SSL_MAX_CONTENT_LEN is %s' % record in r.out) == warned,
              'a record limit below 16384 is warned about, naming the option', r)
        cleanup(r)
    r = scons('stm32f407-m4f', config={'PKG_AGENT_TLS_MBEDTLS': '', 'PKG_USING_MBEDTLS': ''},
              installed=['thumbv7em-none-eabihf'])
    check_success(r, 'thumbv7em-none-eabihf', build_std=False, features=('channel-cli', 'tls'))
    p = [g for g in r.records if g['name'] == 'Agent'][0]['parameters']
    check('LINKFLAGS' not in p and 'CPPDEFINES' not in p and 'LOCAL_CPPDEFINES' not in p,
          'no TLS glue without webclient\'s mbedTLS mode', r)
    cleanup(r)


def test_user_rustflags_are_kept():
    r = scons('stm32f407-m4f', env={'RUSTFLAGS': '-C debuginfo=1'}, installed=['thumbv7em-none-eabihf'])
    c = check_success(r, 'thumbv7em-none-eabihf', build_std=False)
    check(c['env']['RUSTFLAGS'].split()[:2] == ['-C', 'debuginfo=1'], 'user RUSTFLAGS first', r)
    cleanup(r)


def test_panic_abort_builds_core_with_immediate_abort():
    # An installed target too: core must be rebuilt with the panic strategy.
    r = scons('stm32f407-m4f', config={'PKG_AGENT_PANIC_ABORT': ''}, installed=['thumbv7em-none-eabihf'])
    c = check_success(r, 'thumbv7em-none-eabihf', build_std=True,
                      extra_flags=['-Zunstable-options', '-C', 'panic=immediate-abort'])
    flags = c['env']['RUSTFLAGS'].split()
    check(flags.index('panic=immediate-abort') > flags.index('panic=abort'), 'the later -C panic wins', r)
    cleanup(r)
    r = scons('stm32f407-m4f', config={'PKG_AGENT_PANIC_ABORT': ''}, installed=['thumbv7em-none-eabihf'],
              env={'FAKE_RUSTC_OLD': '1'})
    check(r.rc != 0 and not r.calls and 'Rust 1.92' in r.err, 'a rustc without immediate-abort: a clear error', r)
    cleanup(r)
    r = scons('stm32f407-m4f', config={'PKG_AGENT_PANIC_ABORT': ''}, installed=['thumbv7em-none-eabihf'],
              rust_src=False)
    check(r.rc != 0 and 'PKG_AGENT_PANIC_ABORT' in r.err and 'rust-src' in r.err,
          'without the library sources: a clear error', r)
    cleanup(r)


def test_cargo_runs_every_time():
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'])
    check(r.rc == 0, 'first build', r)
    r2 = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'], bsp=r.bsp)
    check(r2.rc == 0 and len(r2.calls) == 1, 'cargo runs again on a second scons (cargo decides staleness)', r2)
    cleanup(r)
    cleanup(r2)


def test_missing_cargo_is_a_clear_error():
    empty = tempfile.mkdtemp(prefix='rtt-agent-empty-path-')
    r = scons('stm32f407-m4f', path=empty, installed=['thumbv7em-none-eabihf'])
    check(r.rc != 0, 'scons must fail without cargo', r)
    check('rtt-agent: error: cargo was not found' in r.err, 'clear message naming cargo', r)
    check('PKG_AGENT_PREBUILT_LIB' in r.err and 'rustup' in r.err, 'message says how to fix it', r)
    check('Traceback' not in r.err, 'no Python traceback', r)
    check(not r.records, 'no group without a library', r)
    os.rmdir(empty)
    cleanup(r)


def test_cargo_from_env_var_with_rustc_beside_it():
    elsewhere = tempfile.mkdtemp(prefix='rtt-agent-toolchain-')
    for tool in ('cargo', 'rustc'):
        shutil.copy(os.path.join(FAKE_BIN, tool), elsewhere)
    empty = tempfile.mkdtemp(prefix='rtt-agent-empty-path-')
    r = scons('stm32f407-m4f', path=empty, env={'CARGO': os.path.join(elsewhere, 'cargo')},
              installed=['thumbv7em-none-eabihf'])
    check(r.rc == 0 and len(r.calls) == 1, '$CARGO is used', r)
    check(r.calls[0]['argv0'] == os.path.join(elsewhere, 'cargo'), 'the $CARGO binary ran', r)
    check(r.calls[0]['env'].get('RUSTC') == os.path.join(elsewhere, 'rustc'), 'rustc beside $CARGO', r)
    shutil.rmtree(elsewhere)
    os.rmdir(empty)
    cleanup(r)


def test_missing_target_and_sources_is_a_clear_error():
    r = scons('stm32f407-m4f', installed=[], rust_src=False)
    check(r.rc != 0 and not r.calls, 'no cargo run without the target', r)
    check('target thumbv7em-none-eabihf is not installed' in r.err
          and 'rustup target add thumbv7em-none-eabihf' in r.err, 'clear message naming the target', r)
    check('Traceback' not in r.err, 'no Python traceback', r)
    cleanup(r)


def test_target_unknown_to_rustc_is_a_clear_error():
    r = scons('stm32f407-m4f', env={'FAKE_RUSTC_TARGETS': 'x86_64-unknown-linux-gnu'})
    check(r.rc != 0 and not r.calls, 'no cargo run for an unknown target', r)
    check('does not know the target thumbv7em-none-eabihf' in r.err, 'clear message', r)
    cleanup(r)


def test_cargo_failure_stops_the_build():
    r = scons('stm32f407-m4f', env={'FAKE_CARGO_FAIL': '1'}, installed=['thumbv7em-none-eabihf'])
    check(r.rc != 0 and len(r.calls) == 1, 'scons fails when cargo fails', r)
    check('cargo failed (exit code 101)' in r.err and 'cannot find value' in r.err, 'cargo output and a summary', r)
    check(not r.records, 'no group', r)
    cleanup(r)


def test_prebuilt_library_skips_cargo():
    tmp = tempfile.mkdtemp(prefix='rtt-agent-prebuilt-')
    lib = os.path.join(tmp, 'librtt_agent.a')
    with open(lib, 'wb') as f:
        f.write(b'!<arch>\n')
    empty = tempfile.mkdtemp(prefix='rtt-agent-empty-path-')
    r = scons('stm32f407-m4f', config={'PKG_AGENT_PREBUILT_LIB': '"%s"' % lib}, path=empty)
    check(r.rc == 0 and not r.calls, 'no cargo with a prebuilt library (and none needed)', r)
    g = r.records[0]
    check(g['parameters']['LIBS'] == ['rtt_agent'] and g['parameters']['LIBPATH'] == [tmp], 'prebuilt LIBS/LIBPATH', r)
    check(sorted(g['src']) == sorted(expected_sources(r.pkg)), 'the C half is still compiled', r)
    cleanup(r)
    r = scons('stm32f407-m4f', config={'PKG_AGENT_PREBUILT_LIB': '"%s"' % os.path.join(tmp, 'nope.a')})
    check(r.rc != 0 and 'PKG_AGENT_PREBUILT_LIB' in r.err and 'no such file' in r.err, 'missing prebuilt file', r)
    cleanup(r)
    shutil.rmtree(tmp)
    os.rmdir(empty)


def test_without_objcopy_the_archive_is_linked_as_built():
    bin_dir = tempfile.mkdtemp(prefix='rtt-agent-bin-')
    for tool in ('cargo', 'rustc'):
        os.symlink(os.path.join(FAKE_BIN, tool), os.path.join(bin_dir, tool))
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'], path=bin_dir, env={'RTT_EXEC_PATH': bin_dir})
    check(r.rc == 0 and not r.objcopy, 'builds without objcopy', r)
    check('keeps its own' in r.out and 'memcpy' in r.out, 'says the library keeps its own mem* functions', r)
    g = [g for g in r.records if g['name'] == 'Agent'][0]
    check(g['parameters']['LIBPATH'] == [os.path.join(r.bsp, 'build', 'rtt_agent', 'thumbv7em-none-eabihf',
                                                      'release')], 'LIBPATH %r' % g['parameters']['LIBPATH'], r)
    shutil.rmtree(bin_dir, ignore_errors=True)
    cleanup(r)


def test_an_objcopy_that_cannot_read_the_archive_changes_nothing():
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'], env={'FAKE_OBJCOPY_FOREIGN': '1'})
    check(r.rc == 0 and len(r.objcopy) == 1, 'builds, objcopy tried once', r)
    check('could not hand memcpy' in r.out, 'says so', r)
    g = [g for g in r.records if g['name'] == 'Agent'][0]
    check(g['parameters']['LIBPATH'] == [os.path.join(r.bsp, 'build', 'rtt_agent', 'thumbv7em-none-eabihf',
                                                      'release')], 'the archive as built: %r' % g['parameters'], r)
    cleanup(r)


def test_rt_using_rust_links_side_by_side():
    r = scons('stm32f407-m4f', config={'RT_USING_RUST': ''}, installed=['thumbv7em-none-eabihf'])
    c = check_success(r, 'thumbv7em-none-eabihf', build_std=False)
    features = c['argv'][c['argv'].index('--features') + 1].split(',') if '--features' in c['argv'] else []
    check('rt-rust-runtime' not in features, 'not rt-rust-runtime: the staticlib keeps its runtime internal', r)
    check('RT_USING_RUST is on' in r.out, 'the build says what happens with RT_USING_RUST', r)
    cleanup(r)


def test_clean_removes_the_rust_build():
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'])
    check(r.rc == 0, 'build', r)
    lib = os.path.join(r.bsp, 'build', 'rtt_agent', 'thumbv7em-none-eabihf', 'release', 'librtt_agent.a')
    check(os.path.exists(lib), 'the (fake) library exists after the build', r)
    c = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'], bsp=r.bsp, args=['-c'])
    check(c.rc == 0, 'scons -c', c)
    check(not c.calls, 'scons -c does not run cargo', c)
    check(not os.path.exists(os.path.join(r.bsp, 'build', 'rtt_agent')), 'scons -c removes build/rtt_agent', c)
    cleanup(r)
    cleanup(c)


def package_copy_with_tool_folders(tmp):
    """A copy of the package (what SCons reads of it) with a user's tool in a
    folder of its own and the C package's MQTT toolset, as a user who
    updated the C package keeps them."""
    pkg = os.path.join(tmp, 'bsp', 'packages', 'Agent')
    os.makedirs(pkg)
    for name in ('SConscript', 'Cargo.toml', 'include', 'src', 'glue', 'tools'):
        from_ = os.path.join(REPO, name)
        if os.path.isdir(from_):
            shutil.copytree(from_, os.path.join(pkg, name))
        else:
            shutil.copy(from_, pkg)
    for folder, files in (('src/tools/tool_mqtt', ('tool_mqtt.c', 'tool_mqtt_ops.c')),
                          ('src/tools/my_sensor', ('my_sensor.c',)),
                          ('src/tools/my_sensor/drivers', ('bus.c',)),
                          ('include/tools/tool_mqtt', ('tool_mqtt.h',)),
                          ('include/tools/my_sensor', ('my_sensor.h',))):
        os.makedirs(os.path.join(pkg, folder), exist_ok=True)
        for f in files:
            open(os.path.join(pkg, folder, f), 'w').close()
    bsp = os.path.dirname(os.path.dirname(pkg))
    shutil.copy(os.path.join(HERE, 'SConstruct.bsp'), os.path.join(bsp, 'SConstruct'))
    shutil.copy(os.path.join(HERE, 'boards', 'stm32f407-m4f', 'rtconfig.py'), bsp)
    return bsp, pkg


def test_tool_folders_are_compiled_with_their_headers():
    tmp = tempfile.mkdtemp(prefix='rtt-agent-tool-folders-')
    bsp, pkg = package_copy_with_tool_folders(tmp)
    sensor = [os.path.join(pkg, 'src/tools/my_sensor/my_sensor.c'),
              os.path.join(pkg, 'src/tools/my_sensor/drivers/bus.c')]
    mqtt = [os.path.join(pkg, 'src/tools/tool_mqtt', f) for f in ('tool_mqtt.c', 'tool_mqtt_ops.c')]
    # Without PKG_AGENT_TOOL_MQTT_ENABLE the MQTT folder stays out (its
    # sources need paho-mqtt); a user's own folder is compiled, nested too.
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'], bsp=bsp)
    check(r.rc == 0, 'scons failed', r)
    g = [g for g in r.records if g['name'] == 'Agent'][0]
    check(sorted(g['src']) == sorted(expected_sources(pkg)), 'sources %r' % g['src'], r)
    check(all(f in g['src'] for f in sensor) and not any(f in g['src'] for f in mqtt),
          'the user folder in, tool_mqtt out: %r' % g['src'], r)
    check(g['parameters']['CPPPATH'] == expected_cpppath(pkg, extra_tools=('my_sensor',)),
          'CPPPATH %r' % g['parameters']['CPPPATH'], r)
    # With it, the MQTT toolset and its header folder are in.
    r = scons('stm32f407-m4f', installed=['thumbv7em-none-eabihf'], bsp=bsp,
              config={'PKG_AGENT_TOOL_MQTT_ENABLE': True})
    check(r.rc == 0, 'scons failed', r)
    g = [g for g in r.records if g['name'] == 'Agent'][0]
    check(sorted(g['src']) == sorted(expected_sources(pkg, mqtt=True)), 'sources %r' % g['src'], r)
    check(all(f in g['src'] for f in sensor + mqtt), 'both folders in: %r' % g['src'], r)
    check(g['parameters']['CPPPATH'] == expected_cpppath(pkg, extra_tools=('my_sensor', 'tool_mqtt')),
          'CPPPATH %r' % g['parameters']['CPPPATH'], r)
    shutil.rmtree(tmp, ignore_errors=True)


def test_package_disabled_builds_nothing():
    r = scons('stm32f407-m4f', drop=['PKG_USING_AGENT'], installed=['thumbv7em-none-eabihf'])
    check(r.rc == 0 and not r.calls and not r.records, 'nothing happens without PKG_USING_AGENT', r)
    cleanup(r)


def test_target_override():
    r = scons('stm32f407-m4f', config={'PKG_AGENT_RUST_TARGET': '"thumbv7em-none-eabi"'})
    check_success(r, 'thumbv7em-none-eabi', build_std=True)
    cleanup(r)


def test_unknown_board_is_a_clear_error():
    r = scons('stm32f407-m4f', drop=['ARCH_ARM', 'ARCH_ARM_CORTEX_M', 'ARCH_ARM_CORTEX_M4'],
              rtconfig_py="ARCH = 'xtensa'\nCPU = 'esp32'\nPLATFORM = 'gcc'\nDEVICE = ' -mlongcalls'\nCFLAGS = DEVICE\n")
    check(r.rc != 0 and not r.calls, 'no cargo run for an unknown board', r)
    check('cannot tell the Rust target' in r.err and 'PKG_AGENT_RUST_TARGET' in r.err, 'clear message', r)
    cleanup(r)


# Target detection on more boards: (ARCH_* symbols, rtconfig ARCH, DEVICE flags, expected target)
DETECTION = [
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_M0'], 'arm', '-mcpu=cortex-m0 -mthumb', 'thumbv6m-none-eabi'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_M3'], 'arm', '-mcpu=cortex-m3 -mthumb', 'thumbv7m-none-eabi'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_M4'], 'arm', '-mcpu=cortex-m4 -mthumb -mfloat-abi=soft', 'thumbv7em-none-eabi'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_M7'], 'arm', '-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=softfp',
     'thumbv7em-none-eabi'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_M7'], 'arm', '-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard',
     'thumbv7em-none-eabihf'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_M33'], 'arm', '-mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard',
     'thumbv8m.main-none-eabihf'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_A'], 'arm', '-march=armv7-a -mfpu=vfpv3-d16 -mfloat-abi=hard',
     'thumbv7a-none-eabihf'),
    (['ARCH_ARM', 'ARCH_ARM_CORTEX_R4'], 'arm', '-mcpu=cortex-r4 -mfloat-abi=soft', 'thumbv7r-none-eabi'),
    (['ARCH_ARMV8', 'ARCH_AARCH64'], 'aarch64', '-march=armv8-a -mstrict-align', 'aarch64-unknown-none'),
    (['ARCH_RISCV', 'ARCH_RISCV32'], 'risc-v', '-march=rv32imafc -mabi=ilp32f', 'riscv32imafc-unknown-none-elf'),
    (['ARCH_RISCV', 'ARCH_RISCV32'], 'risc-v', '-march=rv32imc_zicsr -mabi=ilp32', 'riscv32imc-unknown-none-elf'),
    (['ARCH_RISCV', 'ARCH_RISCV64'], 'risc-v', '-march=rv64imafdc -mabi=lp64d -mcmodel=medany',
     'riscv64gc-unknown-none-elf'),
    (['ARCH_RISCV', 'ARCH_RISCV64'], 'risc-v', '-march=rv64imac -mabi=lp64 -mcmodel=medany',
     'riscv64imac-unknown-none-elf'),
]


def test_target_detection_table():
    arch_syms = [k for k in json.load(open(os.path.join(HERE, 'boards', 'stm32f407-m4f', 'config.json')))
                 if k.startswith('ARCH_')]
    for syms, arch, device, want in DETECTION:
        rtconfig_py = "ARCH = %r\nCPU = ''\nPLATFORM = 'gcc'\nDEVICE = %r\nCFLAGS = DEVICE + ' -O2'\n" % (arch, ' ' + device)
        r = scons('stm32f407-m4f', drop=arch_syms, config={s: '' for s in syms}, rtconfig_py=rtconfig_py)
        check(r.rc == 0 and len(r.calls) == 1, 'build for %s' % device, r)
        argv = r.calls[0]['argv']
        got = argv[argv.index('--target') + 1]
        check(got == want, '%s %s: got %s, want %s' % (syms, device, got, want), r)
        cleanup(r)


# Every option of shared/spec/abi.md plus the new ones the C glue reads.
KCONFIG_INT_DEFAULTS = {
    'PKG_AGENT_WEB_SOCKET_BUFSZ': 2048, 'PKG_AGENT_RESP_BUFSZ': 2048,
    'PKG_AGENT_MAX_REASONING_LEN': 8192, 'PKG_AGENT_MAX_CONTENT_LEN': 8192,
    'PKG_AGENT_STREAM_LINE_BUFSZ': 1024, 'PKG_AGENT_MAX_TOOL_ARG_LEN': 1024,
    'PKG_AGENT_MESSAGE_TRIM': 6, 'PKG_AGENT_MAX_TOKENS': 4096, 'PKG_AGENT_MAX_TOOL_ROUNDS': 10,
    'PKG_AGENT_HTTP_TIMEOUT_MS': 30000, 'PKG_AGENT_HTTP_RETRIES': 3, 'PKG_AGENT_RETRY_BASE_MS': 500,
    'PKG_AGENT_LOOP_STACK_SIZE': 8192, 'PKG_AGENT_LOOP_PRIORITY': 20, 'PKG_AGENT_REPLY_TIMEOUT_MS': 30000,
}
KCONFIG_STRINGS = ['PKG_AGENT_API_KEY', 'PKG_AGENT_API_URL', 'PKG_AGENT_MODEL_NAME', 'PKG_AGENT_PATH',
                   'PKG_AGENT_VER', 'PKG_AGENT_PREBUILT_LIB', 'PKG_AGENT_RUST_TARGET']
KCONFIG_SELECTS = ['PKG_USING_CJSON', 'PKG_USING_WEBCLIENT', 'PKG_USING_MBEDTLS',
                   'PKG_USING_MBEDTLS_DIGICERT_ROOT_CA', 'PKG_USING_MBEDTLS_CLOBALSIGN_ROOT_CA', 'RT_USING_ULOG']


def _kconfig(tmp):
    import kconfiglib
    # The symbols the package selects or depends on live in other menus of a
    # real tree; declare them so the package's Kconfig can be loaded alone.
    top = os.path.join(tmp, 'Kconfig')
    with open(top, 'w') as f:
        for s in KCONFIG_SELECTS + ['PKG_USING_WEBNET', 'WEBNET_USING_CGI', 'WEBCLIENT_USING_FILE_DOWMLOAD',
                                    'RT_USING_RUST', 'RT_USING_DFS', 'DFS_USING_POSIX']:
            f.write('config %s\n    bool\n' % s)
        # The kernel's and other packages' symbols the newest C package's
        # options read, settable here.
        for s in ['PKG_USING_PAHOMQTT', 'PKG_USING_RT_VSNPRINTF_FULL', 'PKG_USING_WAVPLAYER',
                  'PKG_WP_USING_RECORD', 'RT_USING_AUDIO', 'RT_USING_MSH', 'RT_KLIBC_USING_LIBC_VSNPRINTF',
                  'RT_KLIBC_USING_VSNPRINTF_STANDARD', 'RT_KLIBC_USING_VSNPRINTF_DECIMAL_SPECIFIERS']:
            f.write('config %s\n    bool "%s"\n' % (s, s))
        f.write('config RT_VER_NUM\n    hex "RT_VER_NUM"\n    default 0x50300\n')
        f.write('source "%s"\n' % os.path.join(REPO, 'packages', 'Kconfig'))
    os.environ['CONFIG_'] = ''  # RT-Thread's rtconfig.h has no CONFIG_ prefix
    kconf = kconfiglib.Kconfig(top, warn_to_stderr=False)
    check(not kconf.warnings, 'Kconfig warnings: %s' % kconf.warnings)
    return kconf


def test_kconfig_options_and_defaults():
    try:
        import kconfiglib  # noqa: F401
    except ImportError:
        raise AssertionError('kconfiglib is missing (apt-get install python3-kconfiglib; tests/scons/run.sh does)')
    tmp = tempfile.mkdtemp(prefix='rtt-agent-kconfig-')
    try:
        kconf = _kconfig(tmp)
        check(kconf.syms['PKG_USING_AGENT'].set_value(2), 'PKG_USING_AGENT can be enabled')
        for s in KCONFIG_SELECTS:
            check(kconf.syms[s].str_value == 'y', '%s is selected by PKG_USING_AGENT' % s)
        for name, value in KCONFIG_INT_DEFAULTS.items():
            check(name in kconf.syms and kconf.syms[name].str_value == str(value),
                  '%s defaults to %s (got %s)' % (name, value, kconf.syms.get(name) and kconf.syms[name].str_value))
        for name in KCONFIG_STRINGS:
            check(name in kconf.syms and kconf.syms[name].type == kconfiglib.STRING, '%s is a string option' % name)
        check(kconf.syms['PKG_AGENT_API_URL'].str_value.startswith('https://'), 'API URL default')
        check(kconf.syms['PKG_AGENT_PREBUILT_LIB'].str_value == '', 'no prebuilt library by default')
        check(kconf.syms['PKG_AGENT_DROP_REASONING'].str_value == 'n', 'reasoning kept by default')
        check(kconf.syms['PKG_AGENT_CLI_CHANNEL'].str_value == 'y', 'CLI channel by default')
        # The optional parts are off by default: the C package had none of them.
        for s in ('PKG_AGENT_CLI_HISTORY', 'PKG_AGENT_MSH_EXTRAS'):
            check(kconf.syms[s].str_value == 'n', '%s off by default' % s)
            check(kconf.syms[s].set_value(2), '%s selectable' % s)
        # The abilities beyond the C package (docs/agent-abilities.md): off by
        # default; the notes and the schedule keep files, so they need DFS.
        for s in ('PKG_AGENT_TOOL_OPTIONS', 'PKG_AGENT_NOTES', 'PKG_AGENT_SCHEDULE', 'PKG_AGENT_SUBAGENTS'):
            check(kconf.syms[s].str_value == 'n', '%s off by default' % s)
        for s in ('PKG_AGENT_TOOL_OPTIONS', 'PKG_AGENT_SUBAGENTS'):
            check(kconf.syms[s].set_value(2), '%s selectable' % s)
        for s in ('PKG_AGENT_NOTES', 'PKG_AGENT_SCHEDULE'):
            check('RT_USING_DFS' in kconfiglib.expr_str(kconf.syms[s].direct_dep), '%s depends on RT_USING_DFS' % s)
        for name in ('PKG_AGENT_NOTES_FILE', 'PKG_AGENT_NOTES_MAX', 'PKG_AGENT_SCHEDULE_FILE', 'PKG_AGENT_PROFILES_FILE'):
            check(name in kconf.syms, '%s exists' % name)
        # A fix the C package lacked, on by default, and it can be turned off.
        check(kconf.syms['PKG_AGENT_CHECK_TOOL_ARGS'].str_value == 'y', 'tool arguments checked by default')
        check(kconf.syms['PKG_AGENT_CHECK_TOOL_ARGS'].set_value(0), 'the check can be turned off')
        check(kconf.syms['PKG_AGENT_CHECK_TOOL_ARGS'].set_value(2), 'and on again')
        check(kconf.syms['PKG_AGENT_SUMMARY'].str_value == 'n', 'no summary request by default')
        check(kconf.syms['PKG_AGENT_SUMMARY_MAX_LEN'].visibility == 0, 'note length hidden without the summary')
        check(kconf.syms['PKG_AGENT_SUMMARY'].set_value(2), 'summary selectable')
        check(kconf.syms['PKG_AGENT_SUMMARY_MAX_LEN'].str_value == '600', 'note length default')
        check(kconf.syms['PKG_AGENT_SUMMARY'].set_value(0), 'summary off again')
        check(kconf.syms['PKG_AGENT_TOOLS_TEXT'].str_value == 'n', 'native function calling by default')
        check(kconf.syms['PKG_AGENT_TOOLS_TEXT'].set_value(2), 'tools as text selectable')
        for s in ('PKG_AGENT_PROVIDER_ANTHROPIC', 'PKG_AGENT_PROVIDER_OLLAMA'):
            check(kconf.syms[s].str_value == 'n', '%s off by default (OpenAI only, as the C package)' % s)
            check(kconf.syms[s].set_value(2), '%s selectable' % s)
        check(kconf.syms['PKG_AGENT_API_FORMAT'].str_value == '', 'wire format from the URL by default')
        check(kconf.syms['PKG_AGENT_MULTIMODAL_DISABLE'].str_value == 'y', 'multimodal off by default')
        check(kconf.syms['PKG_AGENT_MCP_SERVER'].str_value == 'n', 'no MCP server by default')
        check(kconf.syms['PKG_AGENT_MCP_PORT'].visibility == 0, 'MCP options hidden without the server')
        check(kconf.syms['PKG_AGENT_MCP_SERVER'].set_value(2), 'MCP server selectable')
        check(kconf.syms['PKG_AGENT_MCP_PORT'].str_value == '8000', 'MCP port default')
        check(kconf.syms['PKG_AGENT_MCP_PATH'].str_value == '/mcp', 'MCP endpoint default')
        check(kconf.syms['PKG_AGENT_MCP_TOKEN'].str_value == '', 'no MCP token by default')
        check(kconf.syms['PKG_AGENT_MCP_SERVER'].set_value(0), 'MCP server off again')
        check(kconf.syms['PKG_AGENT_PANIC_LOG'].str_value == 'y', 'a panic is logged by default')
        check(kconf.syms['PKG_AGENT_PANIC_ABORT'].set_value(2), 'immediate abort selectable')
        check(kconf.syms['PKG_AGENT_PANIC_LOG'].str_value == 'n', 'one panic strategy at a time')
        check(kconf.syms['PKG_AGENT_PANIC_LOG'].set_value(2), 'logged panics selectable again')
        check(kconf.syms['PKG_AGENT_VER'].str_value != '', 'a version is chosen')
        # TLS: mbedTLS and the two root CAs by default, as the C package had
        # them; 'None' for plain http:// endpoints pulls in none of them.
        check(kconf.syms['PKG_AGENT_TLS_MBEDTLS'].str_value == 'y', 'mbedTLS by default')
        check(kconf.syms['PKG_AGENT_TLS_NONE'].set_value(2), 'no TLS selectable')
        check(kconf.syms['PKG_AGENT_LOOP_STACK_SIZE'].str_value == '6144',
              'loop stack 6144 without TLS (got %s)' % kconf.syms['PKG_AGENT_LOOP_STACK_SIZE'].str_value)
        for s in ('PKG_USING_MBEDTLS', 'PKG_USING_MBEDTLS_DIGICERT_ROOT_CA', 'PKG_USING_MBEDTLS_CLOBALSIGN_ROOT_CA'):
            check(kconf.syms[s].str_value == 'n', '%s not selected without TLS' % s)
        check(kconf.syms['PKG_AGENT_TLS_MBEDTLS'].set_value(2), 'mbedTLS selectable again')
        check(kconf.syms['PKG_USING_MBEDTLS'].str_value == 'y', 'mbedTLS selected again')
        # The entropy seed file of boards without a hardware RNG: only with
        # DFS's POSIX file API (not selected yet here).
        check(kconf.syms['PKG_AGENT_TLS_SEED_FILE'].type == kconfiglib.STRING, 'the TLS seed file is a string option')
        check(kconf.syms['PKG_AGENT_TLS_SEED_FILE'].visibility == 0, 'no TLS seed file without DFS_USING_POSIX')
        # Extra channels next to the CLI: the WebNet page selects WebNet and
        # offers the web token, as the WebNet channel does.
        check(kconf.syms['PKG_AGENT_ALSO_WEBNET_CHANNEL'].str_value == 'n', 'no extra WebNet page by default')
        check(kconf.syms['PKG_AGENT_ALSO_DEBUG_CHANNEL'].str_value == 'n', 'no extra debug command by default')
        check(kconf.syms['PKG_AGENT_ALSO_WEBNET_CHANNEL'].set_value(2), 'extra WebNet page selectable')
        check(kconf.syms['PKG_USING_WEBNET'].str_value == 'y', 'the extra WebNet page selects webnet')
        check(kconf.syms['PKG_AGENT_WEB_TOKEN'].visibility == 2, 'web token offered with the extra WebNet page')
        check(kconf.syms['PKG_AGENT_ALSO_DEBUG_CHANNEL'].set_value(2), 'extra debug command selectable')
        check(kconf.syms['PKG_AGENT_CLI_CHANNEL'].str_value == 'y', 'the CLI stays the chosen channel')
        check(kconf.syms['PKG_AGENT_ALSO_WEBNET_CHANNEL'].set_value(0), 'extra WebNet page off again')
        check(kconf.syms['PKG_AGENT_ALSO_DEBUG_CHANNEL'].set_value(0), 'extra debug command off again')
        # The other choices.
        check(kconf.syms['PKG_AGENT_DEBUG_CHANNEL'].set_value(2), 'debug channel selectable')
        check(kconf.syms['PKG_AGENT_ALSO_DEBUG_CHANNEL'].visibility == 0,
              'no extra debug command when it is the chosen channel')
        check(kconf.syms['PKG_AGENT_CLI_CHANNEL'].str_value == 'n', 'one channel at a time')
        check(kconf.syms['PKG_AGENT_WEBNET_CHANNEL'].set_value(2), 'webnet channel selectable')
        check(kconf.syms['PKG_USING_WEBNET'].str_value == 'y', 'webnet channel selects webnet')
        check(kconf.syms['WEBNET_USING_CGI'].str_value == 'y', 'webnet channel selects its CGI module')
        check(kconf.syms['PKG_AGENT_WEB_TOKEN'].visibility == 2, 'web token offered with the webnet channel')
        check(kconf.syms['PKG_AGENT_WEB_TOKEN'].str_value == '', 'web token empty (configuration refused) by default')
        check(kconf.syms['PKG_AGENT_MULTIMODAL_ENABLE'].set_value(2), 'multimodal selectable')
        for name in ('PKG_AGENT_FILE_OP_THREAD_SIZE', 'PKG_AGENT_UPLOAD_URL', 'PKG_AGENT_DOWNLOAD_URL'):
            check(kconf.syms[name].visibility == 2, '%s offered with multimodal' % name)
        check(kconf.syms['PKG_AGENT_FILE_OP_THREAD_SIZE'].str_value == '4096', 'file thread stack default')
        for s in ('RT_USING_DFS', 'DFS_USING_POSIX'):
            check(kconf.syms[s].str_value == 'y', 'multimodal selects %s (the board\'s file API)' % s)
        check(kconf.syms['PKG_AGENT_TLS_SEED_FILE'].str_value == '/.agent_seed',
              'the TLS seed file defaults to /.agent_seed with DFS_USING_POSIX (got %r)'
              % kconf.syms['PKG_AGENT_TLS_SEED_FILE'].str_value)
        check(kconf.syms['PKG_AGENT_MULTIMODAL_UPLOAD'].str_value == 'y', 'upload to a file server by default')
        check(kconf.syms['PKG_AGENT_MULTIMODAL_INLINE'].set_value(2), 'inline data: URLs selectable')
        check(kconf.syms['PKG_AGENT_MULTIMODAL_UPLOAD'].str_value == 'n', 'one way at a time')
        check(kconf.syms['PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE'].str_value == '1048576', 'file size cap default')
        # What rtconfig.h gets: every macro the C glue and abi.md name.
        header = os.path.join(tmp, 'rtconfig.h')
        kconf.write_autoconf(header)
        text = open(header).read()
        glue = open(os.path.join(REPO, 'glue', 'agent_board_config.c')).read()
        import re
        for name in sorted(set(re.findall(r'\b(PKG_AGENT_[A-Z_]+)\b', glue))):
            if name in ('PKG_AGENT_DROP_REASONING', 'PKG_AGENT_MULTIMODAL_INLINE', 'PKG_AGENT_MULTIMODAL_UPLOAD',
                        'PKG_AGENT_MULTIMODAL_ENABLE', 'PKG_AGENT_PROFILE_SMALL', 'PKG_AGENT_SUBAGENTS'):
                continue  # bools: absent when off
            if name == 'PKG_AGENT_CLI_STACK_SIZE':
                continue  # only with the CLI channel (the WebNet one is chosen here)
            if name.startswith('PKG_AGENT_TOOL_MQTT_'):
                continue  # only with the MQTT toolset (test_kconfig_mqtt_toolset)
            check('#define %s ' % name in text, 'rtconfig.h defines %s' % name)
        for name in ('PKG_USING_AGENT', 'PKG_AGENT_WEBNET_CHANNEL', 'PKG_AGENT_WEB_TOKEN', 'PKG_AGENT_MULTIMODAL_ENABLE',
                     'PKG_AGENT_FILE_OP_THREAD_SIZE', 'PKG_AGENT_UPLOAD_URL', 'PKG_AGENT_DOWNLOAD_URL'):
            check(re.search(r'#define %s\b' % name, text), 'rtconfig.h defines %s' % name)
    finally:
        shutil.rmtree(tmp)


# The newest C package's MQTT options (Agent.Kconfig of CXSforHPU/Agent
# 6e057dc): name, default, range. Ours keep them but the broker's default.
MQTT_INT_OPTIONS = {
    'KEEPALIVE_SEC': (60, 10, 600), 'QOS': (1, 0, 2), 'BUF_SIZE': (1024, 256, 8192),
    'MAX_SUB_TOPICS': (4, 1, 16), 'MAX_RULES': (4, 1, 16), 'TOPIC_MAX_LEN': (64, 16, 256),
    'PAYLOAD_MAX_LEN': (256, 32, 1024), 'MAX_PUB_LEN': (256, 32, 1024), 'FIELD_MAX_LEN': (24, 8, 64),
    'LAST_PAYLOAD_LEN': (96, 16, 256), 'HISTORY_DEPTH': (8, 1, 32), 'HISTORY_PAYLOAD_LEN': (128, 16, 512),
    'RX_QUEUE_DEPTH': (16, 2, 64), 'POLL_DEPTH': (8, 1, 32), 'INJECT_MIN_INTERVAL_MS': (1000, 0, 60000),
    'INJECT_BATCH_MAX': (5, 1, 16), 'BUSY_WAIT_MS': (180000, 0, 900000), 'ALERT_COOLDOWN_MS': (60000, 0, 3600000),
    'LOCK_WAIT_MS': (1000, 1, 10000), 'CONNECT_WAIT_MS': (3000, 0, 60000), 'SUB_WAIT_MS': (3000, 0, 60000),
    'RX_THREAD_STACK': (3072, 2048, 16384), 'RX_THREAD_PRIO': (15, 1, 31),
}
MQTT_STRING_OPTIONS = {
    'BROKER_URL': '',  # the C package's was a public broker: ours names none
    'CLIENT_ID': 'rt-thread-agent', 'USERNAME': '', 'PASSWORD': '',
    'WILLMSG': 'Goodbye from RT-Thread Agent', 'PUB_TOPIC': 'agent/pub', 'SUB_TOPIC': 'agent/sub',
}


def test_kconfig_mqtt_toolset():
    """The MQTT toolset's options under the C package's names, types,
    defaults and ranges, hidden until it is enabled, which selects
    paho-mqtt; the broker empty, and rtconfig.h says so (the glue's
    agent_mqtt_broker_unset)."""
    import kconfiglib
    tmp = tempfile.mkdtemp(prefix='rtt-agent-kconfig-')
    try:
        kconf = _kconfig(tmp)
        check(kconf.syms['PKG_USING_AGENT'].set_value(2), 'PKG_USING_AGENT can be enabled')
        enable = kconf.syms['PKG_AGENT_TOOL_MQTT_ENABLE']
        check(enable.str_value == 'n', 'the toolset is off by default')
        check(kconf.syms['PKG_AGENT_TOOL_MQTT_BROKER_URL'].visibility == 0, 'its options hidden while off')
        check(kconf.syms['PKG_USING_PAHOMQTT'].str_value == 'n', 'no paho-mqtt while off')
        check(enable.set_value(2), 'the toolset can be enabled')
        check(kconf.syms['PKG_USING_PAHOMQTT'].str_value == 'y', 'it selects paho-mqtt')
        for name, (default, low, high) in MQTT_INT_OPTIONS.items():
            sym = kconf.syms['PKG_AGENT_TOOL_MQTT_' + name]
            check(sym.type == kconfiglib.INT and sym.str_value == str(default),
                  '%s: int %s (got %s)' % (sym.name, default, sym.str_value))
            ranges = [(int(a.str_value), int(b.str_value)) for a, b, _ in sym.ranges]
            check(ranges == [(low, high)], '%s range %s..%s (got %r)' % (sym.name, low, high, ranges))
        for name, default in MQTT_STRING_OPTIONS.items():
            sym = kconf.syms['PKG_AGENT_TOOL_MQTT_' + name]
            check(sym.type == kconfiglib.STRING and sym.str_value == default,
                  '%s: string %r (got %r)' % (sym.name, default, sym.str_value))
        check(kconf.syms['PKG_AGENT_TOOL_MQTT_DEFAULT_MODE_FILTER'].str_value == 'y', 'filter mode by default')
        check(kconf.syms['PKG_AGENT_TOOL_MQTT_AUTO_SUB_DEFAULT'].str_value == 'y', 'default topic subscribed')
        header = os.path.join(tmp, 'rtconfig.h')
        kconf.write_autoconf(header)
        text = open(header).read()
        check('#define PKG_AGENT_TOOL_MQTT_ENABLE' in text and '#define PKG_AGENT_TOOL_MQTT_BROKER_URL ""' in text,
              'rtconfig.h: the toolset with an empty broker')
        glue = open(os.path.join(REPO, 'glue', 'agent_board_config.c')).read()
        check('sizeof(PKG_AGENT_TOOL_MQTT_BROKER_URL) <= 1' in glue, 'the glue reads an empty broker as unset')
        # The audio driver needs the shell and brings wavplayer.
        audio = kconf.syms['PKG_AGENT_DRIVER_AUDIO']
        check(audio.str_value == 'n' and audio.visibility == 0, 'audio off, and not offered without MSH')
        check(kconf.syms['RT_USING_MSH'].set_value(2) and audio.set_value(2) and audio.str_value == 'y',
              'audio with MSH')
        for s in ('PKG_USING_WAVPLAYER', 'PKG_WP_USING_RECORD', 'RT_USING_AUDIO'):
            check(kconf.syms[s].str_value == 'y', 'audio selects %s' % s)
    finally:
        shutil.rmtree(tmp)


def test_kconfig_vsnprintf_source():
    """Where a full rt_vsnprintf comes from, as the C package decides it:
    the package only where the kernel defines none and the package exists
    (RT-Thread before 5.2); a warning line where the kernel's is tiny."""
    tmp = tempfile.mkdtemp(prefix='rtt-agent-kconfig-')
    try:
        kconf = _kconfig(tmp)
        check(kconf.syms['PKG_USING_AGENT'].set_value(2), 'PKG_USING_AGENT can be enabled')
        pkg = kconf.syms['PKG_USING_RT_VSNPRINTF_FULL']
        libc = kconf.syms['RT_KLIBC_USING_LIBC_VSNPRINTF']
        ver = kconf.syms['RT_VER_NUM']
        check(kconf.syms['PKG_AGENT_VSNPRINTF_AUTO'].str_value == 'y', 'auto by default')
        table = [  # (RT_VER_NUM, kernel defers to libc, package selected)
            ('0x50300', False, False), ('0x50300', True, False),  # 5.3: the package does not exist
            ('0x40100', False, False), ('0x40100', True, True),   # 4.1: kernel's, or the package
            ('0x40004', False, True),                             # before 4.1: no klibc rt_vsnprintf
        ]
        for v, defer, want in table:
            check(ver.set_value(v) and libc.set_value(2 if defer else 0), 'set %s' % v)
            check((pkg.str_value == 'y') == want,
                  'RT_VER_NUM %s, libc %s: package %s (got %s)' % (v, defer, want, pkg.str_value))
        check(ver.set_value('0x50300') and libc.set_value(0), 'back to 5.3')
        check(kconf.syms['PKG_AGENT_KLIBC_FULL_VSNPRINTF'].str_value == 'n', "5.3's tiny one has no %g")
        for s in ('RT_KLIBC_USING_VSNPRINTF_STANDARD', 'RT_KLIBC_USING_VSNPRINTF_DECIMAL_SPECIFIERS'):
            check(kconf.syms[s].set_value(2), s)
        check(kconf.syms['PKG_AGENT_KLIBC_FULL_VSNPRINTF'].str_value == 'y', 'the standard one has')
        check(kconf.syms['PKG_AGENT_VSNPRINTF_USE_KLIB'].set_value(2) and ver.set_value('0x40004')
              and pkg.str_value == 'n', 'the kernel\'s only: never the package')
    finally:
        shutil.rmtree(tmp)


def test_kconfig_small_profile():
    """PKG_AGENT_PROFILE_SMALL: the Kconfig's defaults are the glue's
    (AGENT_SMALL_OR(small, normal) in agent_board_config.c), with the profile
    on and off, so a menuconfig rtconfig.h and a hand-written one with only
    PKG_AGENT_PROFILE_SMALL get the same values."""
    import re
    tmp = tempfile.mkdtemp(prefix='rtt-agent-kconfig-')
    try:
        kconf = _kconfig(tmp)
        check(kconf.syms['PKG_USING_AGENT'].set_value(2), 'PKG_USING_AGENT can be enabled')
        glue_text = open(os.path.join(REPO, 'glue', 'agent_board_config.c')).read()
        small = re.findall(r'#define (PKG_AGENT_[A-Z_]+) AGENT_SMALL_OR\((\d+), (\d+)\)', glue_text)
        check(len(small) >= 8, 'the glue has the small profile\'s defaults (%d)' % len(small))
        check(kconf.syms['PKG_AGENT_PROFILE_SMALL'].str_value == 'n', 'the small profile is off by default')
        check(kconf.syms['PKG_AGENT_TLS_MBEDTLS'].str_value == 'y', 'mbedTLS without the profile')
        for name, _, normal in small:
            # The loop stack's glue fallback is the C package's 10240 (an old
            # rtconfig.h without the option); menuconfig's default is 8192
            # with TLS and 6144 without.
            if name == 'PKG_AGENT_LOOP_STACK_SIZE':
                continue
            check(kconf.syms[name].str_value == normal,
                  '%s defaults to %s without the profile (got %s)' % (name, normal, kconf.syms[name].str_value))
        check(kconf.syms['PKG_AGENT_PROFILE_SMALL'].set_value(2), 'the small profile selectable')
        check(kconf.syms['PKG_AGENT_TLS_NONE'].str_value == 'y', 'plain HTTP by default on a small board')
        for name, value, _ in small:
            check(kconf.syms[name].str_value == value,
                  '%s defaults to %s with the profile (got %s)' % (name, value, kconf.syms[name].str_value))
        header = os.path.join(tmp, 'rtconfig.h')
        kconf.write_autoconf(header)
        text = open(header).read()
        check('#define PKG_AGENT_PROFILE_SMALL' in text, 'rtconfig.h says the profile is on')
        check('#define PKG_AGENT_CLI_STACK_SIZE 2048' in text, 'rtconfig.h has the CLI stack')
    finally:
        shutil.rmtree(tmp)


def test_package_json():
    with open(os.path.join(REPO, 'packages', 'package.json')) as f:
        pkg = json.load(f)
    for key in ('name', 'description', 'enable', 'keywords', 'category', 'author', 'license', 'repository',
                'site'):
        check(key in pkg, 'package.json has %s' % key)
    check(pkg['enable'] == 'PKG_USING_AGENT', 'enable symbol')
    versions = [s['version'] for s in pkg['site']]
    kconfig = open(os.path.join(REPO, 'packages', 'Kconfig')).read()
    for v in versions:
        check('"%s"' % v in kconfig, 'version %s of package.json is a PKG_AGENT_VER value' % v)


def main():
    only = sys.argv[sys.argv.index('-k') + 1] if '-k' in sys.argv else ''
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith('test_') and only in n]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
            passed += 1
            print('ok     %s' % name)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print('FAILED %s: %s' % (name, e if isinstance(e, AssertionError) else traceback.format_exc()))
        sys.stdout.flush()
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
