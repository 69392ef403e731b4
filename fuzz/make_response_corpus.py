#!/usr/bin/env python3
"""Seed corpus for the `response` fuzz target: every stream fixture
(tests/streams/*.sse) wrapped in whole HTTP responses, framed each way a
server frames a body (Content-Length, chunked in uneven chunks, closed
connection), plus a few error statuses and odd heads. Each input is one mode
byte (bit 0: small caps) followed by the response bytes.

    python3 fuzz/make_response_corpus.py DIR
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STREAMS = ROOT / "tests" / "streams"

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"


def content_length(body, head=SSE_HEAD):
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def chunked(body, head=SSE_HEAD, sizes=(1, 7, 64, 300, 4096)):
    out = [head, b"Transfer-Encoding: chunked\r\n\r\n"]
    at, i = 0, 0
    while at < len(body):
        n = sizes[i % len(sizes)]
        piece = body[at : at + n]
        # Upper- and lower-case hex, and a chunk extension now and then.
        size = b"%x" % len(piece) if i % 2 else b"%X" % len(piece)
        if i % 5 == 4:
            size += b";ext=1"
        out += [size, b"\r\n", piece, b"\r\n"]
        at += n
        i += 1
    out.append(b"0\r\n\r\n")
    return b"".join(out)


def close_delimited(body, head=SSE_HEAD):
    return head + b"Connection: close\r\n\r\n" + body


def error(status, reason, message, extra=b""):
    body = (
        b'{"error":{"message":"%s","type":"invalid_request_error","code":null}}' % message
    )
    head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n" % (status, reason) + extra
    return content_length(body, head)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    seeds = {}
    for sse in sorted(STREAMS.glob("*.sse")):
        body = sse.read_bytes()
        seeds[f"{sse.stem}.length"] = b"\x00" + content_length(body)
        seeds[f"{sse.stem}.chunked"] = b"\x00" + chunked(body)
        seeds[f"{sse.stem}.close"] = b"\x00" + close_delimited(body)
        seeds[f"{sse.stem}.small-caps"] = b"\x01" + chunked(body, sizes=(13, 2))
    seeds["error-401"] = b"\x00" + error(401, b"Unauthorized", b"Incorrect API key provided")
    seeds["error-429"] = b"\x00" + error(
        429, b"Too Many Requests", b"Rate limit reached", b"Retry-After: 1\r\nretry-after-ms: 5\r\n"
    )
    seeds["error-500-chunked"] = b"\x00" + chunked(
        b'{"error":{"message":"boom","type":"server_error"}}',
        b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n",
    )
    seeds["http10-close"] = b"\x00" + close_delimited(
        (STREAMS / "openai_text.sse").read_bytes(), SSE_HEAD.replace(b"HTTP/1.1", b"HTTP/1.0")
    )
    seeds["head-only"] = b"\x00" + SSE_HEAD + b"\r\n"
    seeds["no-head"] = b"\x00" + (STREAMS / "openai_text.sse").read_bytes()
    seeds["length-too-long"] = b"\x00" + SSE_HEAD + b"Content-Length: 99999\r\n\r\ndata: {}\n\n"
    seeds["lf-only-head"] = b"\x00" + content_length(
        (STREAMS / "openai_text.sse").read_bytes()
    ).replace(b"\r\n", b"\n")
    for name, data in seeds.items():
        (out / name).write_bytes(data)
    print(f"{len(seeds)} seeds in {out}")


if __name__ == "__main__":
    main()
