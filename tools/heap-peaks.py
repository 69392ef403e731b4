#!/usr/bin/env python3
"""Who holds the heap at a peak: reads the dumps of the host heap's peak
tracer (src/host/heap_trace.rs, `RT_HOST_HEAP_TRACE=DIR`) and prints the
live bytes of one peak grouped by the code that allocated them, or the
difference between two peaks.

    tools/heap-peaks.py DIR [PEAK [BASE]]

PEAK and BASE are dump numbers (default: the last dump, and none). With a
BASE, only the groups whose bytes differ are printed, largest change first.
A group is the first frame outside the allocator machinery (the heap, the
global allocator, alloc's collections, cJSON's allocation helpers).
"""
import bisect
import collections
import glob
import os
import re
import subprocess
import sys

MACHINERY = re.compile(
    r"heap_trace|host::heap|rt_malloc|rt_realloc|rt_calloc|rt_free|RtAllocator|__rust_|__rdl_|"
    r"alloc::|core::|base::fallible|cJSON_New|cJSON_strdup|cJSON_Create|cJSON_Add|ensure|print_|parse_|"
    r"cJSON_Parse|cJSON_Print|cJSON_Duplicate|add_item|create_reference|web_malloc|web_calloc|"
    r"web_realloc|web_strdup|rt_strdup|hashbrown|std::")


def load_maps(d):
    """Executable mappings as (start, end, load base, file): a file's load
    base is the start of its mapping at offset 0, where its virtual
    addresses begin (the executable's segments are not at their file
    offsets)."""
    maps, base = [], {}
    for line in open(os.path.join(d, "maps")):
        f = line.split()
        if len(f) < 6:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if int(f[2], 16) == 0 and f[5] not in base:
            base[f[5]] = lo
        if "x" in f[1]:
            maps.append((lo, hi, f[5]))
    maps = sorted((lo, hi, base.get(path, lo), path) for lo, hi, path in maps)
    return maps


def resolve(addrs, maps):
    """address -> function name (inlined frames joined by ' < ')."""
    by_file = collections.defaultdict(list)
    starts = [m[0] for m in maps]
    for a in addrs:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and maps[i][0] <= a < maps[i][1]:
            _, _, load, path = maps[i]
            # One byte back: a return address may be the next line's.
            by_file[path].append((a, a - load - 1))
    names = {}
    for path, pairs in by_file.items():
        if not os.path.exists(path):
            continue
        out = subprocess.run(["addr2line", "-f", "-C", "-i", "-a", "-e", path] + ["%x" % r for _, r in pairs],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        groups = re.split(r"^0x[0-9a-f]+\n", out, flags=re.M)[1:]
        for (a, _), g in zip(pairs, groups):
            lines = g.strip().split("\n")
            funcs = [re.sub(r"::h[0-9a-f]{16}$", "", lines[k]) for k in range(0, len(lines), 2)]
            names[a] = " < ".join(funcs)
    return names


def read_dump(path):
    with open(path) as f:
        head = f.readline().split()
        blocks = []
        for line in f:
            p = line.split()
            if p:
                blocks.append((int(p[0]), [int(x, 16) for x in p[1:]]))
    return dict(zip(head[0::2], head[1::2])), blocks


def group_of(frames, names):
    for a in frames[1:]:
        n = names.get(a, "?")
        for part in n.split(" < "):
            if not MACHINERY.search(part):
                return part
    return names.get(frames[-1], "?") if frames else "?"


def grouped(blocks, names):
    g = collections.Counter()
    for size, frames in blocks:
        g[group_of(frames, names)] += size
    return g


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    d = argv[1]
    dumps = sorted(glob.glob(os.path.join(d, "peak-*.txt")))
    if not dumps:
        sys.stderr.write("no dumps in %s\n" % d)
        return 1
    pick = lambda n: os.path.join(d, "peak-%04d.txt" % int(n))
    peak = pick(argv[2]) if len(argv) > 2 else dumps[-1]
    base = pick(argv[3]) if len(argv) > 3 else None
    maps = load_maps(d)
    ph, pb = read_dump(peak)
    bh, bb = read_dump(base) if base else ({}, [])
    names = resolve({a for _, fr in pb + bb for a in fr}, maps)
    gp = grouped(pb, names)
    print("%s: t %s s, used %s" % (os.path.basename(peak), ph.get("t_s"), ph.get("used")))
    if base:
        gb = grouped(bb, names)
        print("against %s: t %s s, used %s" % (os.path.basename(base), bh.get("t_s"), bh.get("used")))
        diff = [(gp[k] - gb[k], k) for k in set(gp) | set(gb) if gp[k] != gb[k]]
        for delta, k in sorted(diff, key=lambda x: -abs(x[0])):
            print("%+7d  %s" % (delta, k))
    else:
        for k, v in gp.most_common():
            print("%7d  %s" % (v, k))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
