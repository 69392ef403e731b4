#!/usr/bin/env python3
"""Fails unless every package in the dependency graph (dev and build
dependencies included) carries a permissive licence: the library links into
closed firmware."""
import json
import re
import subprocess
import sys

ALLOWED = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "Zlib", "ISC",
           "Unlicense", "0BSD", "Unicode-3.0", "Unicode-DFS-2016", "CC0-1.0",
           "BSL-1.0", "Apache-2.0 WITH LLVM-exception", "NCSA"}

manifests = [a for a in sys.argv[1:] if not a.startswith("-")] or ["Cargo.toml"]
packages = {}
for manifest in manifests:
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--manifest-path", manifest]))
    for pkg in meta["packages"]:
        packages[(pkg["name"], pkg["version"])] = pkg
bad = []
for pkg in packages.values():
    lic = pkg.get("license") or ""
    # An SPDX expression: acceptable when some OR-alternative is all allowed.
    alternatives = [a.strip(" ()") for a in re.split(r"\s+OR\s+|/", lic)]
    ok = any(all(part.strip(" ()") in ALLOWED for part in re.split(r"\s+AND\s+", alt))
             for alt in alternatives if alt)
    if not ok:
        bad.append(f"{pkg['name']} {pkg['version']}: {lic or 'no licence'}")
if bad:
    print("dependencies without a permissive licence:\n  " + "\n  ".join(bad))
    sys.exit(1)
print(f"{len(packages)} packages ({', '.join(manifests)}), all permissively licensed")
