#!/usr/bin/env python3
"""Writes the Anthropic and Ollama stream fixtures: anthropic/NAME.sse and
ollama/NAME.ndjson (raw response bodies, byte for byte as the servers send
them) with NAME.expected.json beside each (what a correct reader gets, with
the generous caps of tests/streams/common.rs's HOST).

As for make_fixtures.py: the expectations come from the data each body was
built from, never from a parser. Shapes follow the providers' documented
streams (Anthropic's "Streaming Messages" page, Ollama's api.md), trimmed.
Run from anywhere: `python3 tests/streams/make_provider_fixtures.py`.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def pieces(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)]


def expected(content="", reasoning="", finish_reason=None, tool_calls=(), error=None,
             error_message=None, signature=""):
    calls = [{"index": c["index"], "id": c["id"], "type": "function", "name": c["name"],
              "arguments": c["arguments"], "too_long": False,
              "id_generated": c.get("id_generated", False)} for c in tool_calls]
    return {"content": content, "reasoning": reasoning, "finish_reason": finish_reason,
            "tool_calls": calls, "content_truncated": False, "reasoning_truncated": False,
            "error": error, "error_message": error_message, "signature": signature}


# --------------------------------------------------------------------------
# Anthropic Messages
# --------------------------------------------------------------------------

def ev(kind, obj, eol="\n"):
    return "event: " + kind + eol + "data: " + dumps(obj) + eol + eol


def ping():
    return ev("ping", {"type": "ping"})


def message_start(model="claude-sonnet-4-5"):
    return ev("message_start", {"type": "message_start", "message": {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "content": [], "model": model, "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 2}}})


def block_start(index, block):
    return ev("content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": block})


def delta(index, d):
    return ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})


def block_stop(index):
    return ev("content_block_stop", {"type": "content_block_stop", "index": index})


def message_delta(stop_reason, output_tokens=89):
    d = {"stop_reason": stop_reason, "stop_sequence": None}
    return ev("message_delta", {"type": "message_delta", "delta": d,
                                "usage": {"output_tokens": output_tokens}})


def message_stop():
    return ev("message_stop", {"type": "message_stop"})


def text_block(index, text, size=5):
    out = block_start(index, {"type": "text", "text": ""})
    for p in pieces(text, size):
        out += delta(index, {"type": "text_delta", "text": p})
    return out + block_stop(index)


def thinking_block(index, text, signature, size=7):
    out = block_start(index, {"type": "thinking", "thinking": ""})
    for p in pieces(text, size):
        out += delta(index, {"type": "thinking_delta", "thinking": p})
    for p in pieces(signature, 40):
        out += delta(index, {"type": "signature_delta", "signature": p})
    return out + block_stop(index)


def tool_block(index, call_id, name, args, size=6, first_empty=True):
    out = block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})
    if first_empty:
        out += delta(index, {"type": "input_json_delta", "partial_json": ""})
    for p in pieces(args, size):
        out += delta(index, {"type": "input_json_delta", "partial_json": p})
    return out + block_stop(index)


SIGNATURE = ("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" +
             "+cFtRiQSGKm+Hd7nP0eTJ7Bxq5tE4tXh8W9b2q/0kVmcMOdmGA7v1sXJq9M1yQ==")

ANTHROPIC = {}


def anthropic(name):
    def register(fn):
        ANTHROPIC[name] = fn
        return fn
    return register


@anthropic("text")
def _():
    text = "Hello! 2 + 3 is 5. Anything else?"
    body = message_start() + text_block(0, text) + message_delta("end_turn") + message_stop()
    return body, expected(content=text, finish_reason="stop")


@anthropic("thinking")
def _():
    thought = "The user greets me; a short friendly answer fits."
    text = "Hi there, how can I help?"
    body = (message_start() + thinking_block(0, thought, SIGNATURE) + text_block(1, text) +
            message_delta("end_turn") + message_stop())
    return body, expected(content=text, reasoning=thought, finish_reason="stop",
                          signature=SIGNATURE)


@anthropic("one_tool")
def _():
    args = '{"a": 2, "b": 3}'
    body = (message_start() + text_block(0, "Let me add them.") +
            tool_block(1, "toolu_01A09q90qw90lq917835lq9", "tool_add", args) +
            message_delta("tool_use") + message_stop())
    return body, expected(content="Let me add them.", finish_reason="tool_calls",
                          tool_calls=[{"index": 1, "id": "toolu_01A09q90qw90lq917835lq9",
                                       "name": "tool_add", "arguments": args}])


@anthropic("parallel_tools")
def _():
    a1 = '{"a": 2, "b": 3}'
    a2 = '{"a": 4, "b": 5}'
    body = (message_start() + tool_block(0, "toolu_01", "tool_add", a1) +
            tool_block(1, "toolu_02", "tool_mul", a2, size=3) +
            message_delta("tool_use") + message_stop())
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "toolu_01", "name": "tool_add", "arguments": a1},
        {"index": 1, "id": "toolu_02", "name": "tool_mul", "arguments": a2}])


@anthropic("split_json")
def _():
    # Pieces end inside escapes, inside a \u escape and inside a multi-byte
    # character of the JSON text (the data is JSON-in-JSON).
    args = '{"text": "caf\\u00e9 \\"quoted\\" \u4e2d\u6587 \\\\ end", "n": [1, 2.5e3, -0.5]}'
    body = (message_start() + tool_block(0, "toolu_split", "echo", args, size=1) +
            message_delta("tool_use") + message_stop())
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "toolu_split", "name": "echo", "arguments": args}])


@anthropic("thinking_tool")
def _():
    thought = "I need the sum: call tool_add."
    args = '{"a": 7, "b": 8}'
    body = (message_start() + thinking_block(0, thought, SIGNATURE) +
            tool_block(1, "toolu_think", "tool_add", args) + message_delta("tool_use") +
            message_stop())
    return body, expected(reasoning=thought, finish_reason="tool_calls", signature=SIGNATURE,
                          tool_calls=[{"index": 1, "id": "toolu_think", "name": "tool_add",
                                       "arguments": args}])


@anthropic("error_event")
def _():
    body = (message_start() + block_start(0, {"type": "text", "text": ""}) +
            delta(0, {"type": "text_delta", "text": "Hi"}) +
            ev("error", {"type": "error", "error": {"type": "overloaded_error",
                                                    "message": "Overloaded"}}))
    return body, expected(content="Hi", error="server_error", error_message="Overloaded")


@anthropic("error_before_content")
def _():
    body = ev("error", {"type": "error", "error": {"type": "api_error",
                                                   "message": "Internal server error"}})
    return body, expected(error="server_error", error_message="Internal server error")


@anthropic("usage_only_events")
def _():
    text = "Done."
    body = (message_start() + text_block(0, text) +
            ev("message_delta", {"type": "message_delta", "delta": {},
                                 "usage": {"output_tokens": 3}}) +
            ev("message_delta", {"type": "message_delta",
                                 "usage": {"input_tokens": 10, "output_tokens": 4}}) +
            message_delta("end_turn") + message_stop())
    return body, expected(content=text, finish_reason="stop")


@anthropic("pings")
def _():
    text = "pong"
    body = (ping() + message_start() + ping() + block_start(0, {"type": "text", "text": ""}) +
            ping() + delta(0, {"type": "text_delta", "text": "po"}) + ping() +
            delta(0, {"type": "text_delta", "text": "ng"}) + ping() + block_stop(0) + ping() +
            message_delta("end_turn") + ping() + message_stop())
    return body, expected(content=text, finish_reason="stop")


@anthropic("max_tokens")
def _():
    text = "This answer is cut"
    body = (message_start() + text_block(0, text) + message_delta("max_tokens") +
            message_stop())
    return body, expected(content=text, finish_reason="length")


@anthropic("crlf_and_key_order")
def _():
    # CRLF line ends; the block's keys in another order than usual (type
    # last); the delta's type after its text.
    eol = "\r\n"
    body = ("event: message_start" + eol + "data: " + dumps(
        {"message": {"id": "msg_x", "usage": {}}, "type": "message_start"}) + eol + eol)
    body += ("event: content_block_start" + eol + "data: " + dumps(
        {"index": 0, "content_block": {"input": {}, "name": "tool_add", "id": "toolu_ko",
                                       "type": "tool_use"}, "type": "content_block_start"})
             + eol + eol)
    body += ("event: content_block_delta" + eol + "data: " + dumps(
        {"delta": {"partial_json": '{"a":1,', "type": "input_json_delta"}, "index": 0,
         "type": "content_block_delta"}) + eol + eol)
    body += ("event: content_block_delta" + eol + "data: " + dumps(
        {"index": 0, "type": "content_block_delta",
         "delta": {"type": "input_json_delta", "partial_json": '"b":2}'}}) + eol + eol)
    body += ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
               eol=eol)
    body += ev("message_stop", {"type": "message_stop"}, eol=eol)
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "toolu_ko", "name": "tool_add", "arguments": '{"a":1,"b":2}'}])


@anthropic("close_after_stop_reason")
def _():
    text = "No message_stop, but a stop_reason."
    body = message_start() + text_block(0, text) + message_delta("end_turn")
    return body, expected(content=text, finish_reason="stop")


@anthropic("cut_before_stop_reason")
def _():
    body = message_start() + block_start(0, {"type": "text", "text": ""}) + delta(
        0, {"type": "text_delta", "text": "Half an ans"})
    return body, expected(content="Half an ans", error="truncated")


@anthropic("server_tool_not_a_call")
def _():
    # A server-side tool block is the server's to run: no call for the loop.
    text = "Searched."
    body = (message_start() +
            block_start(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                            "input": {}}) +
            delta(0, {"type": "input_json_delta", "partial_json": '{"query":"x"}'}) +
            block_stop(0) + text_block(1, text) + message_delta("end_turn") + message_stop())
    return body, expected(content=text, finish_reason="stop")


# --------------------------------------------------------------------------
# Ollama native /api/chat
# --------------------------------------------------------------------------

CREATED = "2025-05-27T22:54:57.641643Z"


def line(message=None, done=False, extra=None, eol="\n", model="qwen3"):
    obj = {"model": model, "created_at": CREATED}
    if message is not None:
        obj["message"] = message
    obj["done"] = done
    if extra:
        obj.update(extra)
    return dumps(obj) + eol


def final(reason="stop", eol="\n"):
    return line({"role": "assistant", "content": ""}, True, {
        "done_reason": reason, "total_duration": 4883583458, "load_duration": 1334875,
        "prompt_eval_count": 26, "prompt_eval_duration": 342546000, "eval_count": 282,
        "eval_duration": 4535599000}, eol=eol)


def content_lines(text, size=4, key="content"):
    return "".join(line({"role": "assistant", "content": "", key: p} if key != "content"
                        else {"role": "assistant", "content": p}) for p in pieces(text, size))


def call(name, args, call_id=None, index=None):
    f = {"name": name, "arguments": args}
    if index is not None:
        f = {"index": index, "name": name, "arguments": args}
    c = {"function": f}
    if call_id:
        c = {"id": call_id, "function": f}
    return c


OLLAMA = {}


def ollama(name):
    def register(fn):
        OLLAMA[name] = fn
        return fn
    return register


@ollama("text")
def _():
    text = "The sky is blue because of Rayleigh scattering."
    return content_lines(text) + final(), expected(content=text, finish_reason="stop")


@ollama("thinking")
def _():
    thought = "Short question; answer plainly."
    text = "Hello!"
    body = content_lines(thought, 5, key="thinking") + content_lines(text) + final()
    return body, expected(content=text, reasoning=thought, finish_reason="stop")


@ollama("one_tool")
def _():
    body = line({"role": "assistant", "content": "",
                 "tool_calls": [call("tool_add", {"a": 2, "b": 3})]}) + final()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_0", "name": "tool_add", "arguments": '{"a":2,"b":3}',
         "id_generated": True}])


@ollama("repeated_ids")
def _():
    # Two calls with one id (found by the fuzzer): the second gets its own,
    # since tool results are matched to calls by id.
    body = line({"role": "assistant", "content": "", "tool_calls": [
        call("tool_add", {"a": 2, "b": 3}, "call_abc", 0),
        call("tool_mul", {"a": 4, "b": 5}, "call_abc", 1)]}) + final()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_abc", "name": "tool_add", "arguments": '{"a":2,"b":3}'},
        {"index": 1, "id": "call_1", "name": "tool_mul", "arguments": '{"a":4,"b":5}',
         "id_generated": True}])


@ollama("parallel_tools")
def _():
    body = line({"role": "assistant", "content": "", "tool_calls": [
        call("tool_add", {"a": 2, "b": 3}, "call_abc", 0),
        call("tool_mul", {"a": 4, "b": 5}, "call_def", 1)]}) + final()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_abc", "name": "tool_add", "arguments": '{"a":2,"b":3}'},
        {"index": 1, "id": "call_def", "name": "tool_mul", "arguments": '{"a":4,"b":5}'}])


@ollama("two_lines_same_index")
def _():
    # Each call whole on its own line, both at index 0 and without ids: two
    # calls, never one merged.
    body = (line({"role": "assistant", "content": "",
                  "tool_calls": [call("tool_add", {"a": 1, "b": 1})]}) +
            line({"role": "assistant", "content": "",
                  "tool_calls": [call("tool_add", {"a": 2, "b": 2})]}) + final())
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_0", "name": "tool_add", "arguments": '{"a":1,"b":1}',
         "id_generated": True},
        {"index": 0, "id": "call_1", "name": "tool_add", "arguments": '{"a":2,"b":2}',
         "id_generated": True}])


@ollama("split_json")
def _():
    # Arguments with nesting, escapes, non-ASCII text, numbers of every
    # shape and whitespace: their text is kept exactly as sent.
    raw = ('{"text": "caf\\u00e9 \\"q\\" \u4e2d\u6587", "n": [1, 2.5e3, -0.5, true, null],'
           ' "o": {"k": {}}}')
    obj = ('{"model":"qwen3","created_at":"' + CREATED + '","message":{"role":"assistant",'
           '"content":"","tool_calls":[{"function":{"name":"echo","arguments":' + raw +
           '}}]},"done":false}\n')
    return obj + final(), expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_0", "name": "echo", "arguments": raw, "id_generated": True}])


@ollama("arguments_string")
def _():
    body = line({"role": "assistant", "content": "", "tool_calls": [
        call("tool_add", '{"a": 5, "b": 6}', "call_s")]}) + final()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_s", "name": "tool_add", "arguments": '{"a": 5, "b": 6}'}])


@ollama("error_line")
def _():
    body = content_lines("Hi") + dumps({"error": "model runner has unexpectedly stopped"}) + "\n"
    return body, expected(content="Hi", error="server_error",
                          error_message="model runner has unexpectedly stopped")


@ollama("error_object")
def _():
    body = dumps({"error": {"message": "out of memory", "code": 500}}) + "\n"
    return body, expected(error="server_error", error_message="out of memory")


@ollama("usage_only_and_blank_lines")
def _():
    # CRLF, blank lines between objects, a stats-only final object without
    # a message.
    text = "ok"
    body = ("\r\n" + line({"role": "assistant", "content": text}, eol="\r\n") + "\r\n\n" +
            line(None, True, {"done_reason": "stop", "eval_count": 2}, eol="\r\n"))
    return body, expected(content=text, finish_reason="stop")


@ollama("length")
def _():
    text = "cut short"
    return content_lines(text) + final("length"), expected(content=text,
                                                           finish_reason="length")


@ollama("no_done_reason")
def _():
    text = "fine"
    return content_lines(text) + line(None, True), expected(content=text, finish_reason="stop")


@ollama("cut_before_done")
def _():
    return content_lines("Half"), expected(content="Half", error="truncated")


@ollama("cut_inside_line")
def _():
    return content_lines("ab") + '{"model":"qwen3","message":{"content":"c', expected(
        content="abc", error="truncated")


def main():
    for d, table, ext in (("anthropic", ANTHROPIC, ".sse"), ("ollama", OLLAMA, ".ndjson")):
        out = os.path.join(HERE, d)
        os.makedirs(out, exist_ok=True)
        for name, fn in table.items():
            body, exp = fn()
            with open(os.path.join(out, name + ext), "wb") as f:
                f.write(body.encode("utf-8"))
            with open(os.path.join(out, name + ".expected.json"), "w") as f:
                json.dump(exp, f, indent=1, ensure_ascii=False)
                f.write("\n")


if __name__ == "__main__":
    main()
