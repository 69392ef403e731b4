#!/usr/bin/env python3
"""Let the board's C library provide memcpy and its kin, not the Rust archive.

On bare-metal targets Rust's compiler_builtins always defines memcpy,
memmove, memset, memcmp, bcmp and strlen (and on ARM the __aeabi_mem*
entry points), as weak symbols. A weak definition is still a definition: the
linker then never takes the C library's copies, so the firmware runs the
Rust ones, and the size report counts about 1 KB that the board's C library
(newlib, picolibc, Keil's or IAR's, which all have them: the ARM run-time ABI
requires the __aeabi_ ones) would have provided anyway.

This makes those symbols local to the compiler_builtins object of a copy of
the archive: the library's own calls stay undefined and bind to the board's
C library, and the now-unreferenced Rust copies are dropped by
--gc-sections. One definition of the list, used by the SConscript,
tools/prebuilt-lib and tests/cross/cross.py.

    tools/board_mem.py OBJCOPY IN.a OUT.a
"""
import os
import shutil
import subprocess
import sys

SYMBOLS = ['memcpy', 'memmove', 'memset', 'memcmp', 'bcmp', 'strlen'] + [
    '__aeabi_%s%s' % (name, width)
    for name in ('memcpy', 'memmove', 'memset', 'memclr')
    for width in ('', '4', '8')
]


def localize(objcopy, src, dst):
    """Write `src` with the mem* symbols made local to `dst` (may be `src`)."""
    if os.path.abspath(src) != os.path.abspath(dst):
        shutil.copyfile(src, dst)
    # -D: deterministic member headers, so an unchanged library gives a
    # byte-identical copy and the firmware is not relinked for nothing.
    cmd = [objcopy, '-D'] + ['--localize-symbol=' + s for s in SYMBOLS] + [dst]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    # Any message counts as a failure: an objcopy for another architecture
    # says "Unable to recognise the format" for each member and exits 0.
    if p.returncode != 0 or p.stdout.strip():
        raise RuntimeError('%s failed (%d): %s' % (objcopy, p.returncode, p.stdout.strip()))


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__.split('\n\n')[-1].strip() + '\n')
        return 2
    try:
        localize(argv[1], argv[2], argv[3])
    except (OSError, RuntimeError) as e:
        sys.stderr.write('board_mem: %s\n' % e)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
