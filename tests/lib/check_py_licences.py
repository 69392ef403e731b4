#!/usr/bin/env python3
"""Fails unless every distribution installed in the running Python's
environment is permissively licensed (run it with a test virtualenv's
python: tests/lib/pyvenv.sh). Reads each distribution's License-Expression,
else its License field, else its trove classifiers."""
import importlib.metadata as md
import re
import sys

ALLOWED = {"MIT", "MIT-0", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC",
           "PSF-2.0", "Python-2.0", "0BSD", "Unlicense", "Zlib"}
# Trove classifiers and free-text License fields, mapped to SPDX.
WORDS = {"MIT License": "MIT", "MIT": "MIT", "BSD License": "BSD-3-Clause",
         "BSD": "BSD-3-Clause", "Apache Software License": "Apache-2.0",
         "Apache 2.0": "Apache-2.0", "Apache-2.0": "Apache-2.0",
         "Python Software Foundation License": "PSF-2.0", "ISC License (ISCL)": "ISC"}


def licences(dist):
    meta = dist.metadata
    expr = meta.get("License-Expression")
    if expr:
        alternatives = [a.strip(" ()") for a in re.split(r"\s+OR\s+", expr)]
        return [alternatives]
    found = []
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and text in WORDS:
        found.append(WORDS[text])
    for c in meta.get_all("Classifier") or []:
        if c.startswith("License :: OSI Approved :: "):
            found.append(WORDS.get(c.rsplit(" :: ", 1)[1], c))
    return [found]


bad = []
count = 0
for dist in md.distributions():
    count += 1
    name = dist.metadata["Name"]
    (alts,) = licences(dist)
    if not alts or not any(a in ALLOWED for a in alts):
        bad.append(f"{name} {dist.version}: {alts or 'no licence found'}")
if bad:
    print("Python packages without a permissive licence:\n  " + "\n  ".join(bad))
    sys.exit(1)
print(f"{count} Python packages in {sys.prefix}, all permissively licensed")
