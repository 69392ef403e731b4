#!/usr/bin/env python3
"""Writes NAME.expected.json for each NAME.sse recorded from llama-server
(see README.md), read with Python's own JSON parser: independent of the
parser under test. Run it after recording a new body:

    python3 tests/streams/llama_server/make_expected.py
"""
import glob
import json
import os

here = os.path.dirname(os.path.abspath(__file__))

for path in sorted(glob.glob(os.path.join(here, "*.sse"))):
    content, reasoning, finish = "", "", None
    error, message = None, None
    calls = {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.startswith("data:"):
            continue  # blank lines and ":" comments
        data = line[5:].lstrip(" ")
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        if "error" in chunk:
            # An error event: what came before stays, partial calls do not.
            error, message = "server_error", chunk["error"].get("message")
            calls = {}
            break
        for choice in chunk.get("choices", [])[:1]:
            delta = choice.get("delta") or {}
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for tc in delta.get("tool_calls") or []:
                c = calls.setdefault(tc["index"], {"index": tc["index"], "id": "", "type": "function",
                                                   "name": "", "arguments": "", "too_long": False,
                                                   "id_generated": False})
                c["id"] += tc.get("id") or ""
                c["type"] = tc.get("type") or c["type"]
                fn = tc.get("function") or {}
                c["name"] += fn.get("name") or ""
                c["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    want = {
        "content": content,
        "reasoning": reasoning,
        "finish_reason": finish,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "content_truncated": False,
        "reasoning_truncated": False,
        "error": error,
        "error_message": message,
    }
    out = path[: -len(".sse")] + ".expected.json"
    with open(out, "w", encoding="utf-8") as f:
        json.dump(want, f, indent=2, ensure_ascii=False)
        f.write("\n")
