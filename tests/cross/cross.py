#!/usr/bin/env python3
"""Cross builds, link check and size report for the device targets.

For each target:
  1. build librtt_agent.a as the SConscript does (`cargo rustc --crate-type
     staticlib --release --no-default-features`, RT-Thread's RUSTFLAGS,
     -Zbuild-std=core,alloc -Zbuild-std-features=optimize_for_size when the
     target's std is not installed), plus
     -Zemit-stack-sizes for the stack estimate;
  2. compile src/tools/*.c, src/tool_func.c, glue/*.c with the cross gcc and
     the board's flags against include/ and the stand-in board headers in
     tests/cross/board/ (-Os -fstack-usage);
  3. link them with an entry that calls the public API and references every
     function the library exports, into a bare-metal ELF (-nostartfiles
     -nostdlib -Wl,--gc-sections, finsh's FSymTab kept, libgcc for compiler
     helpers), leaving the board's symbols unresolved;
  4. check every undefined symbol is one a board provides (rt_*, cJSON_*,
     webclient_*, ulog_*, the C library's mem*/str*);
  5. measure text/rodata/data/bss per part from the link map (the framework's
     figures from a second image without the C tools, so compiler helpers
     only the tools need, such as double arithmetic, count as the tools'),
     and the deepest
     stack from .stack_sizes (Rust), .su files (C) and a call graph read off
     the disassembly.
Then, once: link a stand-in of RT-Thread's own Rust runtime (tests/cross/
coexist, its own allocator and panic handler) into the same image, and check
the library exports nothing but its C API.

Writes target/size-report.md and prints the table. Exit status 1 on any
failure. Options: --targets T1,T2  --keep-going
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                'tools'))
import board_mem  # noqa: E402  (tools/board_mem.py: mem* from the board's C library)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, 'target', 'cross')

TARGETS = [
    ('thumbv7em-none-eabihf', 'Cortex-M4F', 'arm-none-eabi-',
     '-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard'),
    ('thumbv7m-none-eabi', 'Cortex-M3', 'arm-none-eabi-', '-mcpu=cortex-m3 -mthumb'),
    # Thumb-2 Rust, A32 C: what the SConscript builds for the qemu-vexpress-a9 BSP.
    ('thumbv7a-none-eabi', 'Cortex-A9 (qemu-vexpress-a9, soft float)', 'arm-none-eabi-',
     '-march=armv7-a -marm -msoft-float'),
    # The same board with A32 Rust (an older rustc, or PKG_AGENT_RUST_TARGET).
    ('armv7a-none-eabi', 'Cortex-A9, A32 Rust', 'arm-none-eabi-', '-march=armv7-a -marm -msoft-float'),
    ('thumbv7r-none-eabi', 'Cortex-R4 (Thumb-2 Rust, A32 C)', 'arm-none-eabi-', '-mcpu=cortex-r4 -marm'),
    # No compare-and-swap: the library's atomics take the kernel's interrupt lock.
    ('thumbv6m-none-eabi', 'Cortex-M0+ (RP2040)', 'arm-none-eabi-', '-mcpu=cortex-m0plus -mthumb'),
    ('riscv32imac-unknown-none-elf', 'RV32IMAC', 'riscv64-unknown-elf-',
     '-march=rv32imac -mabi=ilp32 -mcmodel=medlow'),
    ('riscv32imc-unknown-none-elf', 'RV32IMC (ESP32-C3), no atomics', 'riscv64-unknown-elf-',
     '-march=rv32imc -mabi=ilp32 -mcmodel=medlow'),
]
# Targets the SConscript can pick that are built here but not linked (no bare-metal linker for
# them on this machine, or nothing the list above does not link already): with every part, so a
# target-specific compile error fails here (as the atomics of CPUs without compare-and-swap once
# did, unnoticed, because no such target was built).
BUILD_ONLY = [
    ('thumbv8m.main-none-eabihf', 'Cortex-M33F'),
    ('aarch64-unknown-none', 'Cortex-A53/A72, 64-bit'),
    ('riscv64gc-unknown-none-elf', 'RV64GC (qemu-virt64-riscv)'),
]
COEXIST_TARGET = 'thumbv7em-none-eabihf'

# RT-Thread's RUSTFLAGS, as the SConscript passes them.
RUSTFLAGS = ['-C', 'opt-level=z', '-C', 'panic=abort', '-C', 'relocation-model=static']
# Added by the SConscript when it builds with -Zbuild-std, as it does here.
SIZE_FLAGS_BUILD_STD = ['-Zlocation-detail=none', '-Zfmt-debug=none']
# What a board provides: the kernel (rt_*), finsh (the shell, for MSH commands and the CLI
# channel), cJSON, webclient, ulog, and the C library's mem*/str*.
ALLOWED_UNDEFINED = re.compile(r'^(rt_\w+|finsh_\w+|msh_exec|cJSON_\w+|webclient_\w+|webnet_\w+|ulog_\w+|mem[a-z]+|str[a-z]+|bcmp|'
                               r'__aeabi_mem(cpy|move|set|clr)[48]?|open|read|close|stat|__errno|'
                               r'socket|bind|listen|accept|recv|send|setsockopt|getsockname|getpeername|shutdown|closesocket)$')
CFLAGS_COMMON = ['-Os', '-ffunction-sections', '-fdata-sections', '-fstack-usage', '-Wall', '-Wextra']
# Extra C flags for every target (e.g. CROSS_EXTRA_CFLAGS=-fno-short-enums to try a board that
# overrides arm-none-eabi-gcc's default of short enums).
CFLAGS_COMMON += os.environ.get('CROSS_EXTRA_CFLAGS', '').split()
BUDGET_M4 = (8.1 * 1024, 1.1 * 1024)
TOP_N = 25  # biggest symbols listed per target in the size report  # the C package's framework at -Os: text, data

CARGO = os.environ.get('CARGO', '/usr/bin/cargo')
RUSTC = os.environ.get('RUSTC', os.path.join(os.path.dirname(CARGO), 'rustc'))


class Failure(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, **kw)
    if p.returncode != 0:
        raise Failure('command failed (%d): %s\n%s' % (p.returncode, ' '.join(cmd), p.stdout))
    return p.stdout


def c_sources():
    files = sorted(glob.glob(os.path.join(REPO, 'src', 'tools', '*.c')))
    files.append(os.path.join(REPO, 'src', 'tool_func.c'))
    files += sorted(glob.glob(os.path.join(REPO, 'glue', '*.c')))
    return files


# ------------------------------------------------------------------ building

def cargo_build(target, manifest, extra_rustflags=(), crate_type_staticlib=True, features=(), out=OUT):
    sysroot = run([RUSTC, '--print', 'sysroot']).strip()
    build_std = not os.path.isdir(os.path.join(sysroot, 'lib', 'rustlib', target, 'lib'))
    env = dict(os.environ)
    size_flags = SIZE_FLAGS_BUILD_STD if build_std else []
    env['RUSTFLAGS'] = ' '.join(env.get('RUSTFLAGS', '').split() + RUSTFLAGS + list(extra_rustflags) + size_flags)
    env['CARGO_TARGET_DIR'] = out
    env['RUSTC'] = RUSTC
    env['RUSTC_BOOTSTRAP'] = '1'
    env['PATH'] = os.path.dirname(CARGO) + os.pathsep + env.get('PATH', '')
    if crate_type_staticlib:
        cmd = [CARGO, 'rustc', '--lib', '--release', '--target', target, '--no-default-features',
               '--manifest-path', manifest, '--crate-type', 'staticlib']
        if features:
            cmd += ['--features', ','.join(features)]
    else:
        cmd = [CARGO, 'build', '--release', '--target', target, '--manifest-path', manifest]
    if build_std:
        cmd += ['-Zbuild-std=core,alloc', '-Zbuild-std-features=optimize_for_size']
    p = subprocess.run(cmd, env=env, cwd=os.path.dirname(manifest), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        raise Failure('cargo failed for %s:\n%s' % (target, p.stdout))
    return os.path.join(out, target, 'release')


def has_libc_headers(prefix, cflags):
    p = subprocess.run([prefix + 'gcc'] + cflags.split() + ['-E', '-x', 'c', '-'], input='#include <string.h>\n',
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, universal_newlines=True)
    return p.returncode == 0


def compile_c(target, prefix, cflags, workdir, defines=()):
    includes = ['-I' + os.path.join(HERE, 'board')] + ['-I' + os.path.join(REPO, d) for d in
                                                      ('include', 'include/tools', 'include/channels',
                                                       'include/driver/audio', 'glue')]
    if not has_libc_headers(prefix, cflags):
        includes.append('-I' + os.path.join(HERE, 'board', 'libc'))  # a toolchain without newlib
    objdir = os.path.join(workdir, 'obj')
    shutil.rmtree(objdir, ignore_errors=True)
    os.makedirs(objdir)
    jobs = []
    for src in c_sources() + [os.path.join(HERE, 'entry.c'), os.path.join(workdir, 'api_refs.c')]:
        rel = os.path.relpath(src, REPO).replace(os.sep, '_') if src.startswith(REPO) else os.path.basename(src)
        obj = os.path.join(objdir, rel[:-2] + '.o')
        jobs.append((src, obj))
    warnings = []

    def one(job):
        src, obj = job
        cmd = [prefix + 'gcc'] + cflags.split() + CFLAGS_COMMON + list(defines) + includes + ['-c', src, '-o', obj]
        out = run(cmd, cwd=objdir)
        if out.strip():
            warnings.append(out)
        return obj

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        objs = list(ex.map(one, jobs))
    return objs, objdir, warnings


def exported_api(prefix, lib):
    """Global symbols defined by the library's own object (not compiler_builtins)."""
    out = run([prefix + 'nm', '-g', '--defined-only', lib])
    member, funcs, data, rust_named = None, [], [], []
    for line in out.splitlines():
        if line.endswith(':'):
            member = line[:-1]
            continue
        parts = line.split()
        if len(parts) != 3 or member is None or member.startswith('compiler_builtins'):
            continue
        kind, name = parts[1], parts[2]
        if name.startswith('_R') or name.startswith('_ZN') or 'rust' in name:
            rust_named.append(name)
        (funcs if kind in 'TW' else data).append(name)
    return sorted(set(funcs)), sorted(set(data)), sorted(set(rust_named))


def write_api_refs(path, funcs, data, extra_calls=()):
    with open(path, 'w') as f:
        f.write('/* Generated by tests/cross/cross.py: references every function and object\n'
                ' * the library exports, so --gc-sections keeps all of it. */\n')
        for n in funcs:
            f.write('extern void %s(void);\n' % n)
        for n in data:
            f.write('extern char %s[];\n' % n)
        for n in extra_calls:
            f.write('extern unsigned %s(void);\n' % n)
        f.write('const void *volatile agent_api_sink;\nvoid agent_link_all_api(void)\n{\n')
        for n in funcs:
            f.write('    agent_api_sink = (const void *)%s;\n' % n)
        for n in data:
            f.write('    agent_api_sink = (const void *)%s;\n' % n)
        for n in extra_calls:
            f.write('    agent_api_sink = (const void *)(unsigned long)%s();\n' % n)
        f.write('}\n')


def board_lib(prefix, libdir, workdir):
    """A copy of the built archive as the SConscript links it: memcpy and its kin
    left to the board's C library (tools/board_mem.py)."""
    lib = os.path.join(workdir, 'librtt_agent.a')
    board_mem.localize(prefix + 'objcopy', os.path.join(libdir, 'librtt_agent.a'), lib)
    return lib


def is_tool_object(obj):
    return os.path.basename(obj).startswith('src_')


def framework_image(prefix, cflags, objs, lib, workdir):
    """Link the image again without the C tools; (sizes, elf) of that image."""
    elf = os.path.join(workdir, 'framework.elf')
    mapfile = link(prefix, cflags, [o for o in objs if not is_tool_object(o)], [lib], elf)
    return sizes_from_map(mapfile), elf


def link(prefix, cflags, objs, libs, elf):
    mapfile = elf[:-4] + '.map'
    cmd = ([prefix + 'gcc'] + cflags.split() +
           ['-nostartfiles', '-nostdlib', '-T', os.path.join(HERE, 'link.ld'), '-Wl,--gc-sections',
            '-Wl,--unresolved-symbols=ignore-all', '-Wl,-Map=' + mapfile, '-o', elf] + objs + libs + ['-lgcc'])
    out = run(cmd)
    if out.strip():
        log(out.rstrip())
    return mapfile


def undefined_symbols(prefix, elf):
    return sorted(set(l.split()[-1] for l in run([prefix + 'nm', '-u', elf]).splitlines() if l.strip()))


# -------------------------------------------------------------------- sizes

PARTS = ('rust', 'helpers', 'glue', 'tools', 'libgcc', 'harness')


def part_of(path):
    base = os.path.basename(path)
    if 'librtt_agent.a(' in base:
        return 'helpers' if 'compiler_builtins' in base else 'rust'
    if 'libgcc.a(' in base:
        return 'libgcc'
    if base.startswith('glue_'):
        return 'glue'
    if base.startswith('src_'):
        return 'tools'
    return 'harness'


def kind_of(section):
    s = section
    if s.startswith(('.text', '.ARM.exidx', '.ARM.extab', '.init', '.fini')):
        return 'text'
    if s.startswith(('.rodata', '.srodata', 'FSymTab')):
        return 'rodata'
    if s.startswith(('.data', '.sdata')):
        return 'data'
    if s.startswith(('.bss', '.sbss', 'COMMON', '.tbss')):
        return 'bss'
    return None  # debug info, attributes, .stack_sizes, .comment: not in the image


def sizes_from_map(mapfile):
    """{part: {text, rodata, data, bss}} from a GNU ld map file."""
    totals = {p: dict(text=0, rodata=0, data=0, bss=0) for p in PARTS}
    with open(mapfile) as f:
        lines = f.read().split('\n')
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith('Linker script and memory map'))
    except StopIteration:
        raise Failure('unexpected map file format: %s' % mapfile)
    full = re.compile(r'^ (\S+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$')
    cont = re.compile(r'^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$')
    pending = None
    for line in lines[start:]:
        m = full.match(line)
        if m and not line.startswith(' *'):
            section, size, path = m.group(1), int(m.group(3), 16), m.group(4)
        elif pending and cont.match(line):
            m = cont.match(line)
            section, size, path = pending, int(m.group(2), 16), m.group(3)
        else:
            pending = None
            s = line.strip()
            if line.startswith(' ') and not line.startswith(' *') and s and ' ' not in s and not s.startswith('0x'):
                pending = s  # a long section name; address, size and file follow on the next line
            continue
        pending = None
        kind = kind_of(section)
        if kind and size:
            totals[part_of(path)][kind] += size
    return totals


# -------------------------------------------------------------------- stack

def symbols(prefix, elf, arm):
    """address -> function name (text symbols, local ones included)."""
    names = {}
    for line in run([prefix + 'nm', '--defined-only', elf]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'tTW':
            addr = int(parts[0], 16) & (~1 if arm else ~0)
            names.setdefault(addr, parts[2])
    return names


def rust_stack_sizes(prefix, elf, workdir, names, arm):
    out = os.path.join(workdir, 'stack_sizes.bin')
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([prefix + 'objcopy', '--dump-section', '.stack_sizes=' + out, elf, os.devnull],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0 or not os.path.exists(out):
        return {}
    data = open(out, 'rb').read()
    sizes, i = {}, 0
    while i + 4 <= len(data):
        addr = int.from_bytes(data[i:i + 4], 'little') & (~1 if arm else ~0)
        i += 4
        value, shift = 0, 0
        while i < len(data):
            b = data[i]
            i += 1
            value |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                break
        if addr in names:
            sizes[names[addr]] = max(sizes.get(names[addr], 0), value)
    return sizes


def c_stack_sizes(objdir):
    sizes = {}
    for su in glob.glob(os.path.join(objdir, '*.su')):
        for line in open(su):
            parts = line.rstrip('\n').split('\t')
            if len(parts) >= 2:
                name = parts[0].rsplit(':', 1)[-1]
                sizes[name] = max(sizes.get(name, 0), int(parts[1]))
    return sizes


def call_graph(prefix, elf):
    """{function: (set of callees, has_indirect_call)} from the disassembly."""
    graph, current = {}, None
    head = re.compile(r'^[0-9a-f]+ <(.+)>:$')
    insn = re.compile(r'^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$')
    for line in run([prefix + 'objdump', '-d', '--no-show-raw-insn', elf]).splitlines():
        m = head.match(line)
        if m:
            current = m.group(1)
            graph[current] = (set(), [False])
            continue
        m = insn.match(line)
        if not m or current is None:
            continue
        op, args = m.group(1), m.group(2).strip()
        if not op.startswith(('b', 'cb', 'j', 'c.j', 'call', 'tail')):
            continue
        t = re.search(r'<([^>+]+)>', args)
        if t:
            if t.group(1) != current:
                graph[current][0].add(t.group(1))  # a call, or a tail call
        elif op in ('blx', 'jalr', 'c.jalr') or (op == 'bx' and args != 'lr') \
                or (op in ('jr', 'c.jr') and args != 'ra'):
            graph[current][1][0] = True
    return {k: (v[0], v[1][0]) for k, v in graph.items()}


# Rust's allocation-error path: `handle_alloc_error` and the handler it calls
# (`__rust_alloc_error_handler`, `__rdl_alloc_error_handler`, `__rg_oom`). An
# infallible `Vec`/`String`/`Box` growth reaches it; on a board it aborts.
ALLOC_ERROR = re.compile(r'handle_alloc_error|alloc_error_handler|__rg_oom|__rust_oom')


def alloc_error_paths(graph, roots):
    """A shortest call path from a root to each allocation-error function still in the image."""
    targets = {f for f in graph if ALLOC_ERROR.search(f)}
    if not targets:
        return []
    parent = {r: None for r in roots if r in graph}
    queue = list(parent)
    while queue:
        f = queue.pop(0)
        for c in graph.get(f, ((), False))[0]:
            if c in graph and c not in parent:
                parent[c] = f
                queue.append(c)
    paths = []
    for t in sorted(targets):
        path, f = [], t
        if t not in parent:
            paths.append([t, '(no path found from the API: called indirectly?)'])
            continue
        while f is not None:
            path.append(f)
            f = parent[f]
        paths.append(list(reversed(path)))
    return paths


def demangle(prefix, names):
    """Readable names (Rust v0 and legacy mangling, via binutils' c++filt), hashes dropped."""
    if not names:
        return []
    p = subprocess.run([prefix + 'c++filt'], input='\n'.join(names) + '\n', stdout=subprocess.PIPE,
                       universal_newlines=True)
    out = p.stdout.split('\n')[:len(names)] if p.returncode == 0 else list(names)
    short = []
    for n in out:
        n = re.sub(r'\[[0-9a-f]{16}\]', '', n)  # v0 crate disambiguators
        n = re.sub(r'::h[0-9a-f]{16}$', '', n)
        if len(n) > 70:
            n = n[:67] + '...'
        short.append(n)
    return short


def deepest(graph, frames, roots):
    memo, cycles = {}, set()

    def depth(f, stack):
        if f in memo:
            return memo[f]
        if f in stack:
            cycles.add(f)
            return (0, [f + ' (recursion)'])
        stack.add(f)
        best = (0, [])
        for c in graph.get(f, (set(), False))[0]:
            d = depth(c, stack)
            if d[0] > best[0]:
                best = d
        stack.discard(f)
        result = (frames.get(f, 0) + best[0], [f] + best[1])
        memo[f] = result
        return result

    sys.setrecursionlimit(100000)
    best = (0, [])
    for r in roots:
        if r in graph:
            d = depth(r, set())
            if d[0] > best[0]:
                best = d
    return best, cycles


# --------------------------------------------------------------------- main

# Every optional part on (the "full" figure), as the host port builds it.
FULL_FEATURES = ['all-parts']
# Every part, and the C-only audio driver (glue/agent_audio.c over MSH).
FULL_DEFINES = ['-DAGENT_ALL_PARTS', '-DPKG_AGENT_DRIVER_AUDIO', '-DRT_USING_MSH']
# The old C package's feature set: the CLI channel, no Debug channel, no extra
# MSH commands, no line history (the default menuconfig choices).
OLD_FEATURES = ['channel-cli']
# Optional abilities beyond the C package (docs/agent-abilities.md): each is
# built on its own over the old feature set, and its flash over that set is
# reported (Cortex-M4F only: the other targets would repeat the figure).
ABILITIES = [('tool-options', 'PKG_AGENT_TOOL_OPTIONS'), ('notes', 'PKG_AGENT_NOTES'),
             ('schedule', 'PKG_AGENT_SCHEDULE'), ('sub-agents', 'PKG_AGENT_SUBAGENTS')]
# Symbols of the parts the old feature set leaves out: none may be in its image.
LEFT_OUT = re.compile(r'^(agent_send_message|agent_debug_\w+|agent_config|agent_status|__fsym_agent_(send_message|config|'
                      r'status)\w*)$|channels..debug|ffi..commands|history_step')


def variant_image(target, prefix, cflags, name, features, rustflags=(), defines=(), out=OUT):
    """Build the library as a board with `features` would, link it with the glue (no tools) in
    check/<target>-<name>; (sizes, the symbols the image defines)."""
    workdir = os.path.join(OUT, 'check', '%s-%s' % (target, name))
    os.makedirs(workdir, exist_ok=True)
    libdir = cargo_build(target, os.path.join(REPO, 'Cargo.toml'), rustflags, features=features, out=out)
    lib = board_lib(prefix, libdir, workdir)
    funcs, data, _ = exported_api(prefix, lib)
    write_api_refs(os.path.join(workdir, 'api_refs.c'), funcs, data)
    objs, _, _ = compile_c(target, prefix, cflags, workdir, defines)
    sizes, elf = framework_image(prefix, cflags, objs, lib, workdir)
    defined = [l.split()[-1] for l in run([prefix + 'nm', '--defined-only', elf]).splitlines() if l.strip()]
    return sizes, defined


def framework_flash(sizes):
    """Flash of the framework: Rust + helpers + glue, text + rodata + data."""
    return sum(sizes[p][k] for p in ('rust', 'helpers', 'glue') for k in ('text', 'rodata', 'data'))


# Rust's panic machinery: the panic handler, core's panicking functions and the formatter they
# use. No code path of the library can reach them (every index and range is a `get`; src/text.rs
# has the slice helpers), so --gc-sections drops all of them, in every build.
PANIC_CODE = re.compile(r'rust_begin_unwind|^core::panicking::|slice_index_fail|len_mismatch_fail|unwrap_failed|'
                        r'expect_failed|assert_failed|^core::fmt::|<\w+ as core::fmt::')


def check_no_panic(target, what, prefix, defined):
    """Fail when the image whose defined symbols are `defined` links any panic code."""
    shown = demangle(prefix, defined)
    panics = sorted(set(s for d, s in zip(defined, shown) if PANIC_CODE.search(d) or PANIC_CODE.search(s)))
    if panics:
        raise Failure('%s: the %s links panic code, so some path can still panic (an index or a slice '
                      'range, copy_from_slice, chunks, strip_suffix, windows...: use get or src/text.rs\'s '
                      'helpers): %s' % (target, what, ' '.join(panics[:12])))


def old_feature_set(target, prefix, cflags):
    """Build and link the old package's feature set; its sizes. Fails when a left-out part is in it,
    or when any panic code is (no panic can happen in it, and the image shows it)."""
    sizes, defined = variant_image(target, prefix, cflags, 'old-set', OLD_FEATURES)
    shown = demangle(prefix, defined)
    present = sorted(set(s for d, s in zip(defined, shown) if LEFT_OUT.search(d) or LEFT_OUT.search(s)))
    if present:
        raise Failure('%s: the old feature set (%s) still links parts it leaves out: %s'
                      % (target, ','.join(OLD_FEATURES), ' '.join(present[:12])))
    check_no_panic(target, 'old feature set (%s)' % ','.join(OLD_FEATURES), prefix, defined)
    log('   old feature set (%s): %d bytes of flash, without the Debug channel, agent_config, agent_status, '
        'history; no panic code linked' % (','.join(OLD_FEATURES), framework_flash(sizes)))
    return (sizes,) + old_areas_and_top(target, prefix)


def old_areas_and_top(target, prefix):
    """Flash by area and the biggest symbols of the old feature set's image (the one
    variant_image linked)."""
    workdir = os.path.join(OUT, 'check', '%s-old-set' % target)
    harness, c_names = set(), set()
    for o in glob.glob(os.path.join(workdir, 'obj', '*.o')):
        names = set(l.split()[-1] for l in run([prefix + 'nm', '--defined-only', o]).splitlines()
                    if len(l.split()) == 3)
        (harness if os.path.basename(o).startswith(('target_cross', 'entry')) else c_names).update(names)
    funcs, data, _ = exported_api(prefix, os.path.join(workdir, 'librtt_agent.a'))
    return attribute(prefix, os.path.join(workdir, 'framework.elf'), c_names, harness, set(funcs) | set(data))


def ability_costs(target, prefix, cflags, old_sizes):
    """Flash of each ability on its own over the old feature set: (feature, option, flash, more)."""
    old = framework_flash(old_sizes)
    costs = []
    for feature, option in ABILITIES:
        sizes, defined = variant_image(target, prefix, cflags, 'old-' + feature, OLD_FEATURES + [feature])
        check_no_panic(target, 'old feature set with %s' % feature, prefix, defined)
        flash = framework_flash(sizes)
        costs.append((feature, option, flash, flash - old))
        log('   old feature set + %s: %d bytes of flash (+%d)' % (feature, flash, flash - old))
    return costs


# PKG_AGENT_PANIC_ABORT: the SConscript's extra RUSTFLAGS.
PANIC_ABORT_FLAGS = ['-Zunstable-options', '-C', 'panic=immediate-abort']


def panic_abort_figure(target, prefix, cflags):
    """Flash of the framework with every part and PKG_AGENT_PANIC_ABORT (its own target folder, so
    the other builds stay cached)."""
    sizes, defined = variant_image(target, prefix, cflags, 'panic-abort', FULL_FEATURES, PANIC_ABORT_FLAGS,
                                   FULL_DEFINES, out=os.path.join(OUT, 'panic-abort'))
    fmt = sorted(set(d for d in defined if 'core3fmt' in d))
    if fmt:
        raise Failure('%s: with PKG_AGENT_PANIC_ABORT the image still has core::fmt: %s' % (target, ' '.join(fmt[:6])))
    fw = framework_flash(sizes)
    log('   every part with PKG_AGENT_PANIC_ABORT: %d bytes of flash, no core::fmt' % fw)
    return fw


# Thread entry functions (mangled-name suffix) and the stack each thread gets by default.
# The library's tool functions, reached through a node's execute pointer.
RUST_TOOLS = re.compile(r'(5notes\d+tool_(remember|recall|forget)|10sub_agents\d+subagent_tool)')
THREAD_ENTRIES = [('agent_loop11loop_thread', 'agent loop thread (PKG_AGENT_LOOP_STACK_SIZE, 6144 by default)'),
                  ('cli10cli_thread', 'CLI channel thread'),
                  ('agent_web_cgi', 'WebNet channel\'s handlers, on WebNet\'s thread (WEBNET_THREAD_STACKSIZE, 4096 by default)'),
                  ('server13server_thread', 'MCP server thread, the C tools it runs included (PKG_AGENT_MCP_THREAD_STACK, 6144 by default)')]


def check_thread_entry_a32(target, prefix, elf):
    """A Thumb-2 Cortex-A/R build hands the kernel an A32 thread entry (RT-Thread's Cortex-A
    port starts a thread whose entry address is odd in Thumb state at its A32 `_thread_start`;
    src/rtt/thread.rs). Fail unless the trampoline is there and A32, and the library's
    thread entries Thumb."""
    addr = {}  # readelf, not nm: nm clears the Thumb bit of a function's address
    for line in run([prefix + 'readelf', '-sW', elf]).splitlines():
        parts = line.split()
        if len(parts) == 8 and parts[3] == 'FUNC':
            addr[parts[7]] = int(parts[1], 16)
    # v0 or legacy mangling (the latter without RUSTC_BOOTSTRAP).
    tramp = [n for n in addr if re.search(r'6thread9a32_entry(17h[0-9a-f]{16}E)?$', n)]
    loop = [n for n in addr if re.search(r'agent_loop11loop_thread(17h[0-9a-f]{16}E)?$', n)]
    if len(tramp) != 1 or addr[tramp[0]] & 1:
        raise Failure('%s: no A32 thread entry trampoline (rtt::thread::a32_entry) in the image: %s'
                      % (target, [(n, hex(addr[n])) for n in tramp]))
    if not loop or not addr[loop[0]] & 1:
        raise Failure('%s: the loop thread is not Thumb code: is this a Thumb-2 build?' % target)
    log('   thread entry: an A32 trampoline (%#x), the library\'s threads Thumb (loop thread %#x)'
        % (addr[tramp[0]], addr[loop[0]]))


def check_target(target, board, prefix, cflags, results, api_names):
    t0 = time.time()
    workdir = os.path.join(OUT, 'check', target)
    os.makedirs(workdir, exist_ok=True)
    log('== %s (%s)' % (target, board))
    old_sizes, old_areas, old_top = old_feature_set(target, prefix, cflags)
    panic_abort = panic_abort_figure(target, prefix, cflags) if target == COEXIST_TARGET else None
    abilities = ability_costs(target, prefix, cflags, old_sizes) if target == COEXIST_TARGET else None
    libdir = cargo_build(target, os.path.join(REPO, 'Cargo.toml'), ['-Z', 'emit-stack-sizes'],
                         features=FULL_FEATURES)
    lib = board_lib(prefix, libdir, workdir)
    t_build = time.time() - t0
    funcs, data, rust_named = exported_api(prefix, lib)
    if rust_named:
        raise Failure('%s: the library exports Rust runtime symbols (allocator, panic handler or core), which '
                      'would clash with RT_USING_RUST: %s' % (target, ' '.join(rust_named[:10])))
    api_names.update(funcs)
    write_api_refs(os.path.join(workdir, 'api_refs.c'), funcs, data)
    objs, objdir, warnings = compile_c(target, prefix, cflags, workdir, FULL_DEFINES)
    for w in warnings:
        log(w.rstrip())
    elf = os.path.join(workdir, 'agent.elf')
    mapfile = link(prefix, cflags, objs, [lib], elf)
    undef = undefined_symbols(prefix, elf)
    bad = [s for s in undef if not ALLOWED_UNDEFINED.match(s)]
    log('   undefined symbols the board provides: %d (%s)' % (len(undef), ' '.join(undef)))
    if bad:
        raise Failure('%s: undefined symbols outside the allowed list (rt_*, finsh_*, cJSON_*, webclient_*, '
                      'webnet_*, ulog_*, mem*, str*, the file API, BSD sockets): %s' % (target, ' '.join(bad)))
    with_tools = sizes_from_map(mapfile)
    sizes, framework_elf = framework_image(prefix, cflags, objs, lib, workdir)
    if target.startswith(('thumbv7a', 'thumbv7r')):
        check_thread_entry_a32(target, prefix, elf)
    check_no_panic(target, 'build with every part (%s)' % ','.join(FULL_FEATURES), prefix,
                   [l.split()[-1] for l in run([prefix + 'nm', '--defined-only', framework_elf]).splitlines()
                    if l.strip()])
    sizes['tools'] = with_tools['tools']
    # Compiler helpers only the tools pull in (double arithmetic for their sums).
    tool_helpers = sum(with_tools['helpers'][k] - sizes['helpers'][k] for k in ('text', 'rodata', 'data'))
    c_names, harness = set(), set()
    for o in objs:
        names = set(l.split()[-1] for l in run([prefix + 'nm', '--defined-only', o]).splitlines()
                    if len(l.split()) == 3)
        # The entry and the API references exist only in this test image.
        (harness if os.path.basename(o).startswith(('target_cross', 'entry')) else c_names).update(names)
    areas, top = attribute(prefix, framework_elf, c_names, harness, set(funcs) | set(data))
    arm = prefix.startswith('arm')
    names = symbols(prefix, elf, arm)
    frames = c_stack_sizes(objdir)
    rust_frames = rust_stack_sizes(prefix, elf, workdir, names, arm)
    frames.update({k: v for k, v in rust_frames.items() if k not in frames})
    graph = call_graph(prefix, elf)
    c_funcs = set()
    for su in glob.glob(os.path.join(objdir, '*.su')):
        if not os.path.basename(su).startswith(('entry', 'api_refs')):
            c_funcs.update(l.split('\t')[0].rsplit(':', 1)[-1] for l in open(su))
    # Thread entries are only passed as pointers (rt_thread_create), so no call
    # reaches them: they are roots of their own. The loop runs the C tools
    # through their execute pointers: every function of the tool objects is
    # taken as a possible callee of the loop's indirect calls.
    tool_funcs = set()
    for su in glob.glob(os.path.join(objdir, 'src_*.su')):
        tool_funcs.update(l.split('\t')[0].rsplit(':', 1)[-1] for l in open(su))
    # The library's own tools (Rust functions in a node, called the same way):
    # the notes' and the sub-agents' (whose run is a whole turn of its own).
    rust_tools = set(f for f in graph if RUST_TOOLS.search(f))
    for f, (callees, indirect) in graph.items():
        # The tool's execute function, called through its node: the loop's and
        # the MCP server's calls, and a sub-agent's (which never calls a
        # sub-agent: depth 1).
        if indirect and ('agent_loop' in f or '10mcp_server3rpc' in f or '10sub_agents' in f):
            callees.update(t for t in tool_funcs if t in graph)
            callees.update(t for t in rust_tools if not ('10sub_agents' in f and '10sub_agents' in t))
    entries = {}
    for name, label in THREAD_ENTRIES:
        found = [f for f in graph if f.endswith(name)]
        if found:
            entries[label] = found[0]
    roots = sorted(set(funcs) | c_funcs | set(entries.values()))
    (stack, chain), cycles = deepest(graph, frames, roots)
    thread_stacks = {}
    for label, f in sorted(entries.items()):
        (depth, path), _ = deepest(graph, frames, [f])
        thread_stacks[label] = (depth, demangle(prefix, [c.replace(' (recursion)', '') for c in path])[:4])
    reachable = set()
    todo = [r for r in roots if r in graph]
    while todo:
        f = todo.pop()
        if f in reachable:
            continue
        reachable.add(f)
        todo.extend(c for c in graph.get(f, ((), False))[0] if c in graph)
    alloc_error = alloc_error_paths(graph, roots)
    if alloc_error:
        raise Failure('%s: the allocation-error handler (an abort on a board) is reachable from the C API:\n%s'
                      % (target, '\n'.join('  ' + ' -> '.join(demangle(prefix, path)) for path in alloc_error)))
    log('   allocation-error handler: unreachable from the %d exported and C functions; no panic code linked '
        '(every part)' % len(roots))
    unknown = sorted(f for f in reachable if f not in frames)
    indirect = sorted(f for f in reachable if graph[f][1])
    shown = demangle(prefix, [c.replace(' (recursion)', '') for c in chain])
    chain = ['%s (%s)' % (n, frames.get(c, '?')) for n, c in zip(shown, chain)]
    cycles = demangle(prefix, sorted(cycles))
    results.append(dict(target=target, board=board, sizes=sizes, stack=stack, chain=chain, cycles=cycles,
                        unknown=unknown, indirect=len(indirect), reachable=len(reachable),
                        rust_frames=len(rust_frames), build_s=t_build, total_s=time.time() - t0,
                        undefined=undef, areas=areas, top=top, old_sizes=old_sizes, old_top=old_top,
                        old_areas=old_areas,
                        tool_helpers=tool_helpers, thread_stacks=thread_stacks,
                        panic_abort=panic_abort, abilities=abilities))
    log('   ok: linked, %d undefined symbols all allowed; %.0f s' % (len(undef), time.time() - t0))


def coexist_check(prefix, cflags):
    """RT_USING_RUST: a second Rust runtime in the same image links."""
    t0 = time.time()
    target = COEXIST_TARGET
    log('== RT_USING_RUST: agent library + a stand-in Rust runtime (own allocator and panic handler), %s' % target)
    libdir = cargo_build(target, os.path.join(HERE, 'coexist', 'Cargo.toml'), crate_type_staticlib=False)
    other = os.path.join(libdir, 'librt_rust.a')
    agent = os.path.join(OUT, target, 'release', 'librtt_agent.a')
    workdir = os.path.join(OUT, 'check', 'coexist')
    os.makedirs(workdir, exist_ok=True)
    funcs, data, _ = exported_api(prefix, agent)
    write_api_refs(os.path.join(workdir, 'api_refs.c'), funcs, data, extra_calls=['rust_standin_init'])
    objs, _, _ = compile_c(target, prefix, cflags, workdir)
    elf = os.path.join(workdir, 'agent.elf')
    try:
        link(prefix, cflags, objs, [agent, other], elf)
    except Failure as e:
        raise Failure('the agent library and a second Rust runtime do not link together:\n%s' % e)
    defined = run([prefix + 'nm', '--defined-only', elf])
    if not re.search(r' T rust_standin_init$', defined, re.M) or not re.search(r' T messages_create$', defined, re.M):
        raise Failure('coexistence image lacks one of the two libraries')
    log('   ok: both runtimes link side by side; %.0f s' % (time.time() - t0))


# Header functions the library does not implement: none any more (the WebNet channel and the
# file transfers of multimodal messages came with issue 12).
NOT_YET = set()


def header_functions():
    """Every function the package's headers declare (include/, its subfolders)."""
    names = set()
    for h in glob.glob(os.path.join(REPO, 'include', '**', '*.h'), recursive=True):
        text = re.sub(r'/\*.*?\*/', '', open(h).read(), flags=re.S)
        text = re.sub(r'//[^\n]*', '', text)
        text = re.sub(r'\\\n', ' ', text)
        text = '\n'.join(l for l in text.split('\n') if not l.lstrip().startswith('#'))
        text = text.replace('extern "C" {', ';')
        for _ in range(3):  # struct and enum bodies, innermost first
            text = re.sub(r'\{[^{}]*\}', ';', text)
        for stmt in text.replace('{', ';').replace('}', ';').split(';'):
            stmt = ' '.join(stmt.split())
            if not stmt.endswith(')') or stmt.startswith(('typedef', 'extern "C"')) or '=' in stmt:
                continue
            m = re.match(r'^[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(', stmt)
            if m and not m.group(1).startswith('__'):
                names.add(m.group(1))
    return names


def prebuilt_check(prefix):
    """tools/prebuilt-lib's archive: GNU nm reads it and it defines every C API function that is
    not the package's C (tools, tool_func.c, glue)."""
    t0 = time.time()
    target = COEXIST_TARGET
    log('== prebuilt archive (tools/prebuilt-lib %s), read with %snm' % (target, prefix))
    out = os.path.join(OUT, 'prebuilt', target, 'librtt_agent.a')
    env = dict(os.environ, CARGO=CARGO, RUSTC=RUSTC)
    p = subprocess.run([os.path.join(REPO, 'tools', 'prebuilt-lib'), target, out, ','.join(FULL_FEATURES)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        raise Failure('tools/prebuilt-lib failed:\n%s' % p.stdout)
    listed = run([prefix + 'nm', '-g', '--defined-only', out])
    in_archive = set(l.split()[2] for l in listed.splitlines() if len(l.split()) == 3 and l.split()[1] in 'TW')
    objdir = os.path.join(OUT, 'check', target, 'obj')
    in_c = set()
    for o in glob.glob(os.path.join(objdir, '*.o')):
        if os.path.basename(o).startswith(('target_cross', 'entry')):
            continue
        in_c.update(l.split()[2] for l in run([prefix + 'nm', '-g', '--defined-only', o]).splitlines()
                    if len(l.split()) == 3 and l.split()[1] in 'TW')
    declared = header_functions()
    missing = sorted(declared - in_archive - in_c - NOT_YET)
    if missing:
        raise Failure('the prebuilt archive lacks C API functions the headers declare: %s' % ' '.join(missing))
    log('   ok: %snm lists %d C API functions in it (%d more are the package\'s C, %d not implemented); %.0f s'
        % (prefix, len(declared & in_archive), len(declared & in_c - in_archive), len(declared & NOT_YET),
           time.time() - t0))


# Areas of the size attribution, by the symbol's (demangled) path; first match wins.
AREAS = [
    ('Anthropic adapter (provider-anthropic)', r'rtt_agent::wire::(stream|chat)::anthropic'),
    ('Ollama adapter (provider-ollama)', r'rtt_agent::wire::stream::ndjson|rtt_agent::wire::chat::ollama'),
    ('MCP client (mcp-client)', r'rtt_agent::abilities::mcp_client'),
    ('provider layer (format choice, shared writers)', r'rtt_agent::wire::chat::(provider|common)|rtt_agent::runtime::settings'),
    ('stream parser', r'rtt_agent::wire::stream::'),
    ('chat client', r'rtt_agent::wire::chat::(request|content)|rtt_agent::net::(transport|tls_watch|cancel)|^chat$|rtt_agent::runtime::chat::|rtt_agent::ffi::chat::'),
    ('CLI channel + line editor', r'rtt_agent::channels::cli|rtt_agent::ffi::channel_cli|rtt_agent::wire::line_editor|^agent_cli_'),
    ('Debug channel', r'rtt_agent::channels::debug|rtt_agent::ffi::channel_debug|^agent_debug_|^agent_send_message$'),
    ('multimodal (upload, inline, file ops)', r'rtt_agent::abilities::multimodal|rtt_agent::ffi::multimodal|rtt_agent::wire::chat::inline_file|'
                                              r'rtt_agent::net::file_base64|rtt_agent::rtt::file|'
                                              r'^agent_file_op|^agent_up_load$|^down_load$|^get_agent_file_op|^agent_glue_file'),
    ('tool-argument check', r'rtt_agent::wire::tool_args'),
    ('tools as text', r'rtt_agent::wire::text_calls|rtt_agent::abilities::tools_text'),
    ('memory summary', r'rtt_agent::abilities::memory_summary'),
    ('WebNet channel (its page gzipped included)',
     r'rtt_agent::channels::web|rtt_agent::ffi::channel_web|^agent_web|^webnet_agent_mode$|^cgi_'),
    ('channels\' exchange (Debug, WebNet)', r'rtt_agent::channels::exchange'),
    ('MCP server (mcp-server)', r'rtt_agent::abilities::mcp_server::|rtt_agent::wire::mcp_|^agent_mcp_|^agent_glue_mcp_'),
    ('MSH commands', r'rtt_agent::runtime::commands|rtt_agent::ffi::commands|^agent_config$|^agent_status$'),
    ('agent loop', r'rtt_agent::runtime::(agent_loop|tool_run)|rtt_agent::ffi::agent_loop|^main_loop_entry$|^cleanup_agent|^init_agent$'),
    ('logging', r'rtt_agent::rtt::log'),
    ('panic handler', r'^__rustc::|rtt_agent::rtt::allocator::panic'),
    ('other C API (Rust)', r'rtt_agent::'),
    ('core::fmt', r'^core::fmt|<.* as core::fmt::'),
    ('outlined code (Rust, shared by several areas)', r'^OUTLINED_FUNCTION_'),
    ('core + alloc', r'^<*(core|alloc)::|^<+(char|str|u8|usize|i32|u32|\[)'),
    ('compiler helpers', r'compiler_builtins|^__aeabi|^__(add|sub|mul|div|mod|udiv|umod|ashl|lshr|fix|float|cmp|'
                         r'lt|gt|le|ge|eq|ne|unord|extend|trunc|clz|ctz|pop|bswap)\w*$|^mem(cpy|move|set|cmp)$'),
]


def attribute(prefix, elf, c_names, harness, rust_api):
    """Per-area flash sums and the biggest symbols, from the image's symbol table."""
    listed = run([prefix + 'nm', '--size-sort', '-S', '--defined-only', elf])
    raw = []
    for line in listed.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[2].lower() not in 'trd' or parts[3] in harness:
            continue
        raw.append((int(parts[1], 16), parts[3]))
    shown = demangle(prefix, [n for _, n in raw]) if raw else []
    full = subprocess.run([prefix + 'c++filt'], input='\n'.join(n for _, n in raw) + '\n',
                          stdout=subprocess.PIPE, universal_newlines=True).stdout.split('\n')
    areas, symbols = {}, []
    for (size, name), short, long_name in zip(raw, shown, full):
        long_name = re.sub(r'\[[0-9a-f]{16}\]', '', long_name)
        if name in c_names:
            area = 'C glue and tools'
        elif name in rust_api:
            area = next((a for a, pat in AREAS if re.search(pat, name)), 'other C API (Rust)')
        else:
            area = next((a for a, pat in AREAS if re.search(pat, long_name)), 'other')
        areas[area] = areas.get(area, 0) + size
        symbols.append((size, short, area))
    symbols.sort(key=lambda s: -s[0])
    return areas, symbols


def fmt_kb(n):
    return '%.1f' % (n / 1024.0)


def report(results, coexist_ok, built=()):
    lines = ['# Size report (tests/cross/run.sh)', '',
             'What the agent library adds to a firmware, per target, from the link map of a',
             'bare-metal image that references every exported function and MSH command',
             '(`-Wl,--gc-sections`; the board\'s kernel, cJSON and webclient are not',
             'included). Bytes. *Rust* is the library\'s own code (core/alloc included,',
             'after LTO); *helpers* are compiler_builtins routines it pulls in (libgcc',
             'provides most of them in any firmware); *glue* is glue/*.c; *tools* is',
             'src/tools/*.c and src/tool_func.c (user-editable, compiled -Os). The framework\'s',
             'parts come from the image linked without the tools, so helpers only the tools',
             'need (double arithmetic) are theirs: the *tools\' helpers* row. memcpy and its',
             'kin are the board\'s C library\'s (tools/board_mem.py), as on a firmware.', '']
    lines.append('| target | part | text | rodata | data | bss | flash (text+rodata+data) |')
    lines.append('|---|---|---:|---:|---:|---:|---:|')
    for r in results:
        s = r['sizes']
        fw = {k: s['rust'][k] + s['helpers'][k] + s['glue'][k] for k in ('text', 'rodata', 'data', 'bss')}
        rows = [('Rust', s['rust']), ('helpers', s['helpers']), ('C glue', s['glue']), ('C tools', s['tools']),
                ('tools\' helpers', dict(text=r['tool_helpers'], rodata=0, data=0, bss=0)),
                ('**framework** (Rust+helpers+glue)', fw)]
        if any(s['libgcc'].values()):
            rows.append(('libgcc (already in firmware)', s['libgcc']))
        for name, v in rows:
            lines.append('| %s | %s | %d | %d | %d | %d | %d |' % (
                r['target'], name, v['text'], v['rodata'], v['data'], v['bss'],
                v['text'] + v['rodata'] + v['data']))
    lines += ['', 'Flash of the framework (Rust + helpers + glue, text + rodata + data) with every optional part',
              '(`%s`) and with the old C package\'s feature set (`%s`: the CLI channel; no Debug channel,'
              % (','.join(FULL_FEATURES), ','.join(OLD_FEATURES)),
              'no agent_config/agent_status, no line history), against the old package\'s own 9 127 bytes',
              '(Cortex-M4, -Os; the goals are: full <= 12 288, old set <= 9 127):', '',
              '| target | every part | old feature set | old package |', '|---|---:|---:|---:|']
    for r in results:
        full, old = framework_flash(r['sizes']), framework_flash(r['old_sizes'])
        m4 = r['target'] == 'thumbv7em-none-eabihf'
        lines.append('| %s | %d%s | %d%s | %s |' % (
            r['target'], full, (' (goal %s)' % ('met' if full <= 12288 else 'not met')) if m4 else '',
            old, (' (goal %s)' % ('met' if old <= 9127 else 'not met')) if m4 else '', '9 127' if m4 else '–'))
    for r in results:
        if r.get('panic_abort'):
            lines += ['', 'With `PKG_AGENT_PANIC_ABORT` (a panic stops the CPU without a message: core built with',
                      '`-Cpanic=immediate-abort`, no core::fmt in the image), every part, %s: **%d** bytes.'
                      % (r['target'], r['panic_abort'])]
    for r in results:
        if r.get('abilities'):
            lines += ['', 'Each option on its own: the old feature set with one optional ability beyond the C package',
                      '(docs/agent-abilities.md), %s; off, the old feature set is the figure above:' % r['target'], '',
                      '| option | cargo feature | flash | more than the old feature set |', '|---|---|---:|---:|']
            for feature, option, flash, more in r['abilities']:
                lines.append('| `%s` | `%s` | %d | %+d |' % (option, feature, flash, more))
    lines += ['', 'Flash by area (sizes of the image\'s symbols; inlined code counts where it was inlined;',
              'string constants without a symbol are in no area, so the sum is below the table above):', '']
    names = [a for a, _ in AREAS] + ['C glue and tools', 'other']
    lines.append('| area | ' + ' | '.join(r['target'] for r in results) + ' |')
    lines.append('|---|' + '---:|' * len(results))
    for a in names:
        if any(r['areas'].get(a) for r in results):
            lines.append('| %s | %s |' % (a, ' | '.join('%d' % r['areas'].get(a, 0) for r in results)))
    lines.append('| sum of symbols | %s |' % ' | '.join('%d' % sum(r['areas'].values()) for r in results))
    for r in results:
        lines += ['', 'Biggest symbols, %s:' % r['target'], '', '| bytes | symbol | area |', '|---:|---|---|']
        for size, name, area in r['top'][:TOP_N]:
            lines.append('| %d | `%s` | %s |' % (size, name.replace('|', '\\|'), area))
    for r in results:
        if r['target'] == COEXIST_TARGET:
            lines += ['', 'Flash by area of the old feature set (`%s`), %s (as above: symbols only):'
                      % (','.join(OLD_FEATURES), r['target']), '', '| area | bytes |', '|---|---:|']
            for a in names:
                if r['old_areas'].get(a):
                    lines.append('| %s | %d |' % (a, r['old_areas'][a]))
            lines.append('| sum of symbols | %d |' % sum(r['old_areas'].values()))
            lines += ['', 'Biggest symbols of the old feature set (`%s`), %s:' % (','.join(OLD_FEATURES), r['target']),
                      '', '| bytes | symbol | area |', '|---:|---|---|']
            for size, name, area in r['old_top'][:TOP_N]:
                lines.append('| %d | `%s` | %s |' % (size, name.replace('|', '\\|'), area))
    lines += ['', '| target | deepest stack (bytes) | chain (frame bytes) | functions reachable | '
              'with indirect calls | no stack data |', '|---|---:|---|---:|---:|---:|']
    for r in results:
        chain = ' → '.join('`%s`' % c for c in r['chain'][:10]) + (' → …' if len(r['chain']) > 10 else '')
        lines.append('| %s | %d | %s | %d | %d | %d |' % (r['target'], r['stack'], chain.replace('|', '\\|'),
                                                        r['reachable'], r['indirect'], len(r['unknown'])))
    lines += ['', 'Deepest stack from each thread\'s entry (the loop\'s indirect calls taken to reach any C tool',
              'function; the channel callbacks and the kernel below rt_* are not counted):', '',
              '| target | thread | deepest stack (bytes) | chain starts |', '|---|---|---:|---|']
    for r in results:
        for label, (depth, path) in sorted(r['thread_stacks'].items()):
            lines.append('| %s | %s | %d | %s |' % (r['target'], label, depth,
                                                    ' → '.join('`%s`' % c for c in path).replace('|', '\\|')))
    m4 = next((r for r in results if r['target'] == 'thumbv7em-none-eabihf'), None)
    if m4:
        s = m4['sizes']
        code = sum(s[p]['text'] + s[p]['rodata'] for p in ('rust', 'helpers', 'glue'))
        ram = sum(s[p]['data'] + s[p]['bss'] for p in ('rust', 'helpers', 'glue'))
        lines += ['', 'Budget (reported, not asserted): on Cortex-M4 the old C package\'s framework code at',
                  '-Os was about 8.1 KB text + 1.1 KB data. Ours: %s KB text+rodata, %s KB data+bss '
                  '(%s).' % (fmt_kb(code), fmt_kb(ram),
                             'within budget' if code <= BUDGET_M4[0] and ram <= BUDGET_M4[1] else 'OVER budget')]
    lines += ['', 'Stack method: Rust frames from `-Z emit-stack-sizes` (.stack_sizes), C frames from gcc',
              '`-fstack-usage`; call edges from direct calls and tail calls in the disassembly of the linked',
              'image; the deepest chain from any exported function, MSH command, C tool or thread entry. The',
              'agent loop\'s calls through function pointers are taken to reach every C tool function; other',
              'calls through pointers (channel callbacks, trait objects) are not followed, and functions',
              'without stack data (libgcc, compiler_builtins) count 0, so this is a lower bound: keep a margin.',
              '', 'Link check: every undefined symbol of each image is rt_*, finsh_*, msh_exec, cJSON_*, webclient_*, webnet_*, ulog_*,',
              'the C library\'s mem*/str*/bcmp/__aeabi_mem*, or the file API DFS provides (open, read, close, stat,',
              'errno). Panics: no image links any panic code (panic handler, core::panicking, core::fmt):',
              'no index or range of the library can fail, and the build fails when one could. RT_USING_RUST: %s.' % (
                  'a second Rust runtime with its own allocator and panic handler links into the same image'
                  if coexist_ok else 'not checked')]
    if built:
        lines.append('Also built with every part, not linked (no bare-metal linker here): %s.'
                     % ', '.join('`%s`' % t for t in built))
    extra = os.environ.get('CROSS_EXTRA_CFLAGS', '').strip()
    if extra:
        lines.append('C flags added for this run (CROSS_EXTRA_CFLAGS): `%s`.' % extra)
    for r in results:
        if r['cycles']:
            lines.append('Recursion on %s (not bounded by the estimate): %s' % (r['target'], ', '.join(r['cycles'])))
    text = '\n'.join(lines) + '\n'
    os.makedirs(os.path.join(REPO, 'target'), exist_ok=True)
    with open(os.path.join(REPO, 'target', 'size-report.md'), 'w') as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--targets', default=','.join([t[0] for t in TARGETS] + [t[0] for t in BUILD_ONLY]))
    ap.add_argument('--keep-going', action='store_true')
    ap.add_argument('--no-coexist', action='store_true')
    args = ap.parse_args()
    wanted = args.targets.split(',')
    unknown = [t for t in wanted if t not in [x[0] for x in TARGETS + BUILD_ONLY]]
    if unknown:
        log('unknown target(s): %s' % ' '.join(unknown))
        return 2
    t0 = time.time()
    log('cargo: %s, rustc: %s (%s)' % (CARGO, RUSTC, run([RUSTC, '--version']).strip()))
    results, failures, api = [], [], set()
    for target, board, prefix, cflags in TARGETS:
        if target not in wanted:
            continue
        try:
            check_target(target, board, prefix, cflags, results, api)
        except Failure as e:
            if 'short-enums' in str(e) and prefix.startswith('arm'):
                e = Failure(str(e) + '\nNote: arm-none-eabi-gcc compiles with -fshort-enums by default (and rustc '
                            'uses 8-bit C enums on these targets too), and RT-Thread BSPs keep that default; '
                            'CROSS_EXTRA_CFLAGS=-fno-short-enums tries a board that overrides it.')
            failures.append(str(e))
            log('FAILED %s:\n%s' % (target, e))
            if not args.keep_going:
                break
    built = []
    for target, board in BUILD_ONLY:
        if target not in wanted or (failures and not args.keep_going):
            continue
        t1 = time.time()
        log('== %s (%s): built with every part, not linked' % (target, board))
        # The SConscript's code model for RISC-V (BSPs compile -mcmodel=medany).
        extra = ['-C', 'code-model=medium'] if target.startswith('riscv') else []
        try:
            cargo_build(target, os.path.join(REPO, 'Cargo.toml'), extra, features=FULL_FEATURES)
            built.append(target)
            log('   ok: built; %.0f s' % (time.time() - t1))
        except Failure as e:
            failures.append(str(e))
            log('FAILED %s:\n%s' % (target, e))
    coexist_ok = False
    if not failures and not args.no_coexist and COEXIST_TARGET in wanted:
        t = next(x for x in TARGETS if x[0] == COEXIST_TARGET)
        try:
            coexist_check(t[2], t[3])
            coexist_ok = True
        except Failure as e:
            failures.append(str(e))
            log('FAILED RT_USING_RUST coexistence:\n%s' % e)
    prebuilt_ok = False
    if not failures and COEXIST_TARGET in wanted:
        t = next(x for x in TARGETS if x[0] == COEXIST_TARGET)
        try:
            prebuilt_check(t[2])
            prebuilt_ok = True
        except Failure as e:
            failures.append(str(e))
            log('FAILED prebuilt archive:\n%s' % e)
    if results:
        log('')
        log(report(results, coexist_ok, built))
    checks = len(results) + len(built) + (1 if coexist_ok else 0) + (1 if prebuilt_ok else 0)
    log('cross: %d passed, %d failed (%.0f s)' % (checks, len(failures), time.time() - t0))
    return 1 if failures else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Failure as e:
        log('FAILED: %s' % e)
        sys.exit(1)
