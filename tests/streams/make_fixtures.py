#!/usr/bin/env python3
"""Writes the stream fixtures: NAME.sse (a raw response body, byte for byte
as a server sends it) and NAME.expected.json (what a correct parser reads from
it with generous caps).

The expectations come from the data each body was built from, not from any
parser. Run from anywhere: `python3 tests/streams/make_fixtures.py`. The
output is deterministic; the files are committed so that tests need no
Python and so that the same bodies can be replayed over real TCP.

Shapes follow what the providers actually send (field order, extra fields,
comments), trimmed to what matters.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CREATED = 1732000000


def dumps(obj, ascii_only=False):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only)


def data(obj, ascii_only=False, space=True, eol="\n"):
    sep = ": " if space else ":"
    return "data" + sep + dumps(obj, ascii_only) + eol + eol


def done(eol="\n"):
    return "data: [DONE]" + eol + eol


def chunk(delta=None, finish=None, model="gpt-4o-mini", cid="chatcmpl-AbC123", extra=None,
          choice_extra=None, with_delta=True):
    """An OpenAI chat.completion.chunk with one choice."""
    choice = {"index": 0}
    if with_delta:
        choice["delta"] = delta if delta is not None else {}
    choice["logprobs"] = None
    choice["finish_reason"] = finish
    if choice_extra:
        choice.update(choice_extra)
    obj = {"id": cid, "object": "chat.completion.chunk", "created": CREATED, "model": model,
           "system_fingerprint": "fp_0ba0d124f1", "choices": [choice]}
    if extra:
        obj.update(extra)
    return obj


def pieces(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)]


def expected(content="", reasoning="", finish_reason=None, tool_calls=(), error=None,
             error_message=None, content_truncated=False, reasoning_truncated=False):
    calls = []
    for c in tool_calls:
        call = {"index": c["index"], "id": c["id"], "type": c.get("type", "function"),
                "name": c["name"], "arguments": c["arguments"],
                "too_long": c.get("too_long", False), "id_generated": c.get("id_generated", False)}
        calls.append(call)
    return {"content": content, "reasoning": reasoning, "finish_reason": finish_reason,
            "tool_calls": calls, "content_truncated": content_truncated,
            "reasoning_truncated": reasoning_truncated, "error": error,
            "error_message": error_message}


FIXTURES = {}


def fixture(name):
    def register(fn):
        FIXTURES[name] = fn
        return fn
    return register


def text_stream(text, size=4, **kw):
    out = data(chunk({"role": "assistant", "content": "", "refusal": None}, **kw))
    for p in pieces(text, size):
        out += data(chunk({"content": p}, **kw))
    return out


@fixture("openai_text")
def _():
    text = "Hello! The sum of 2 and 3 is 5. Anything else?"
    body = text_stream(text) + data(chunk({}, "stop")) + done()
    return body, expected(content=text, finish_reason="stop")


def openai_call_fragments(index, call_id, name, args, size=4, model="gpt-4o-mini"):
    """OpenAI: id, type and name only in the first fragment of each call."""
    out = data(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                      "function": {"name": name, "arguments": ""}}]}, model=model))
    for p in pieces(args, size):
        out += data(chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]},
                          model=model))
    return out


@fixture("openai_tool_call")
def _():
    args = '{"a": 2, "b": 3}'
    body = data(chunk({"role": "assistant", "content": None, "refusal": None}))
    body += openai_call_fragments(0, "call_qW3kZ8mN1pL0", "tool_add", args)
    body += data(chunk({}, "tool_calls")) + done()
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "call_qW3kZ8mN1pL0", "name": "tool_add",
                                       "arguments": args}])


@fixture("openai_parallel_calls")
def _():
    calls = [("call_A1", "tool_add", '{"a": 1, "b": 2}'),
             ("call_B2", "tool_mul", '{"a": 3.5, "b": -4}'),
             ("call_C3", "tool_compare", '{"a": 10, "b": 9, "note": "x\\"y"}')]
    body = data(chunk({"role": "assistant", "content": None}))
    for i, (cid, name, args) in enumerate(calls):
        body += openai_call_fragments(i, cid, name, args, size=5)
    body += data(chunk({}, "tool_calls")) + done()
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": i, "id": c, "name": n, "arguments": a}
                                      for i, (c, n, a) in enumerate(calls)])


@fixture("openai_include_usage")
def _():
    text = "Usage comes last."
    usage = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17,
             "prompt_tokens_details": {"cached_tokens": 0},
             "completion_tokens_details": {"reasoning_tokens": 0}}
    body = text_stream(text, extra={"usage": None}) + data(chunk({}, "stop", extra={"usage": None}))
    last = chunk()
    last["choices"] = []
    last["usage"] = usage
    body += data(last) + done()
    return body, expected(content=text, finish_reason="stop")


@fixture("azure_prompt_filter")
def _():
    text = "Filtered but fine."
    filt = {"hate": {"filtered": False, "severity": "safe"},
            "self_harm": {"filtered": False, "severity": "safe"}}
    first = {"choices": [], "created": 0, "id": "", "model": "", "object": "",
             "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filt}]}
    body = data(first)
    cx = {"content_filter_results": {}}
    body += data(chunk({"role": "assistant", "content": ""}, model="gpt-4o-2024-08-06",
                       choice_extra=cx))
    for p in pieces(text, 6):
        body += data(chunk({"content": p}, model="gpt-4o-2024-08-06",
                           choice_extra={"content_filter_results": filt}))
    body += data(chunk({}, "stop", model="gpt-4o-2024-08-06", choice_extra=cx))
    # Azure's trailing chunk: a choice with filter offsets and no delta.
    body += data(chunk(None, None, model="gpt-4o-2024-08-06", with_delta=False,
                       choice_extra={"content_filter_offsets": {"check_offset": 0,
                                     "start_offset": 0, "end_offset": 18},
                                     "content_filter_results": filt}))
    body += done()
    return body, expected(content=text, finish_reason="stop")


def ds_chunk(delta, finish=None):
    return {"id": "0f8e7d6c-aaaa-bbbb-cccc-1234567890ab", "object": "chat.completion.chunk",
            "created": CREATED, "model": "deepseek-reasoner",
            "system_fingerprint": "fp_5417b77867_prod0425fp8",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


@fixture("deepseek_reasoning")
def _():
    reasoning = "Okay, the user asks 2+3. That is 5.\n\nI should answer briefly."
    content = "2 + 3 = 5"
    body = data(ds_chunk({"role": "assistant", "content": None, "reasoning_content": ""}))
    for p in pieces(reasoning, 3):
        body += data(ds_chunk({"content": None, "reasoning_content": p}))
    for p in pieces(content, 2):
        body += data(ds_chunk({"content": p, "reasoning_content": None}))
    body += data(ds_chunk({"content": "", "reasoning_content": None}, "stop"))
    body += done()
    return body, expected(content=content, reasoning=reasoning, finish_reason="stop")


@fixture("deepseek_tool_call")
def _():
    args = '{"a": 6, "b": 7}'
    reasoning = "Need to multiply."
    body = data(ds_chunk({"role": "assistant", "content": None, "reasoning_content": ""}))
    for p in pieces(reasoning, 5):
        body += data(ds_chunk({"content": None, "reasoning_content": p}))
    body += data(ds_chunk({"tool_calls": [{"index": 0, "id": "call_0_8f2e1c77-1a2b-4c3d",
                                           "type": "function",
                                           "function": {"name": "tool_mul", "arguments": ""}}]}))
    for p in pieces(args, 3):
        body += data(ds_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
    body += data(ds_chunk({"content": "", "reasoning_content": None}, "tool_calls"))
    body += done()
    return body, expected(reasoning=reasoning, finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "call_0_8f2e1c77-1a2b-4c3d",
                                       "name": "tool_mul", "arguments": args}])


def or_chunk(delta, finish=None):
    return {"id": "gen-1732000000-AbCdEf", "provider": "DeepInfra", "model": "qwen/qwq-32b",
            "object": "chat.completion.chunk", "created": CREATED,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                         "native_finish_reason": finish, "logprobs": None}]}


@fixture("openrouter_reasoning")
def _():
    reasoning = "Thinking about it... yes."
    content = "Yes."
    body = ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n"
    for p in pieces(reasoning, 7):
        body += data(or_chunk({"role": "assistant", "content": "", "reasoning": p,
                               "reasoning_details": [{"type": "reasoning.text", "text": p,
                                                      "format": "unknown", "index": 0}]}))
    body += ": OPENROUTER PROCESSING\n\n"
    for p in pieces(content, 2):
        body += data(or_chunk({"role": "assistant", "content": p, "reasoning": None}))
    body += data(or_chunk({"role": "assistant", "content": ""}, "stop"))
    last = or_chunk({"role": "assistant", "content": ""})
    last["choices"] = [{"index": 0, "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None, "native_finish_reason": None, "logprobs": None}]
    last["usage"] = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    body += data(last) + done()
    return body, expected(content=content, reasoning=reasoning, finish_reason="stop")


def qwen_chunk(delta, finish=None):
    return {"choices": [{"delta": delta, "finish_reason": finish, "index": 0, "logprobs": None}],
            "object": "chat.completion.chunk", "usage": None, "created": CREATED,
            "system_fingerprint": None, "model": "qwen-plus",
            "id": "chatcmpl-3f2a9c1e-0d4b-9a8b-8c7d-6e5f4a3b2c1d"}


@fixture("qwen_empty_id")
def _():
    args = '{"location": "杭州", "unit": "celsius"}'
    body = data(qwen_chunk({"content": None, "role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_8a7b6c5d4e3f", "type": "function",
         "function": {"name": "get_current_weather", "arguments": ""}}]}))
    for p in pieces(args, 6):
        body += data(qwen_chunk({"tool_calls": [{"index": 0, "id": "", "type": "function",
                                                 "function": {"arguments": p}}]}))
    body += data(qwen_chunk({"content": "", "tool_calls": [
        {"index": 0, "id": "", "type": "function", "function": {"arguments": ""}}]},
        "tool_calls"))
    body += done()
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "call_8a7b6c5d4e3f",
                                       "name": "get_current_weather", "arguments": args}])


def ollama_chunk(delta, finish=None):
    return {"id": "chatcmpl-512", "object": "chat.completion.chunk", "created": CREATED,
            "model": "qwen2.5:7b", "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@fixture("ollama_whole_call")
def _():
    args = '{"a":2,"b":3}'
    body = data(ollama_chunk({"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_x1y2z3", "index": 0, "type": "function",
         "function": {"name": "tool_add", "arguments": args}}]}))
    body += data(ollama_chunk({"role": "assistant", "content": ""}, "tool_calls"))
    body += done()
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "call_x1y2z3", "name": "tool_add",
                                       "arguments": args}])


@fixture("ollama_two_calls_index0")
def _():
    a1, a2 = '{"a":2,"b":3}', '{"a":4,"b":5}'
    body = data(ollama_chunk({"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_first", "index": 0, "type": "function",
         "function": {"name": "tool_add", "arguments": a1}}]}))
    body += data(ollama_chunk({"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_second", "index": 0, "type": "function",
         "function": {"name": "tool_mul", "arguments": a2}}]}))
    body += data(ollama_chunk({"role": "assistant", "content": ""}, "tool_calls"))
    body += done()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_first", "name": "tool_add", "arguments": a1},
        {"index": 0, "id": "call_second", "name": "tool_mul", "arguments": a2}])


def vllm_chunk(delta, finish=None):
    return {"id": "chatcmpl-9d8c7b6a", "object": "chat.completion.chunk", "created": CREATED,
            "model": "Qwen/Qwen2.5-7B-Instruct",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


@fixture("vllm_header_no_args")
def _():
    args = '{"a": 8, "b": 1}'
    body = data(vllm_chunk({"role": "assistant", "content": ""}))
    body += data(vllm_chunk({"tool_calls": [{"id": "chatcmpl-tool-5e4d3c2b1a", "type": "function",
                                             "index": 0, "function": {"name": "tool_compare"}}]}))
    for p in pieces(args, 4):
        body += data(vllm_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
    body += data(vllm_chunk({"content": ""}, "tool_calls"))
    body += done()
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "chatcmpl-tool-5e4d3c2b1a",
                                       "name": "tool_compare", "arguments": args}])


@fixture("no_index_call")
def _():
    # Keys in alphabetical order (function before id), no index anywhere:
    # the first fragment names the call, the rest go by their id or
    # position. A second call comes whole in its own chunk with a new id.
    a1, a2 = '{"a": 1, "b": 1}', '{"x": true}'
    body = data(chunk({"role": "assistant", "tool_calls": [
        {"function": {"arguments": a1[:5], "name": "tool_add"}, "id": "fn_one",
         "type": "function"}]}, model="gemini-2.0-flash"))
    body += data(chunk({"tool_calls": [{"function": {"arguments": a1[5:11]}, "id": "fn_one"}]},
                       model="gemini-2.0-flash"))
    body += data(chunk({"tool_calls": [{"function": {"arguments": a1[11:]}}]},
                       model="gemini-2.0-flash"))
    body += data(chunk({"tool_calls": [{"function": {"arguments": a2, "name": "tool_flag"},
                                        "id": "fn_two", "type": "function"}]},
                       model="gemini-2.0-flash"))
    body += data(chunk({}, "tool_calls", model="gemini-2.0-flash")) + done()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "fn_one", "name": "tool_add", "arguments": a1},
        {"index": 0, "id": "fn_two", "name": "tool_flag", "arguments": a2}])


@fixture("no_id_call")
def _():
    # A server that sends no id at all: the call gets a generated one.
    args = '{"a": 5, "b": 5}'
    body = data(chunk({"tool_calls": [{"index": 0, "type": "function",
                                       "function": {"name": "tool_add", "arguments": args}}]}))
    body += data(chunk({}, "tool_calls")) + done()
    return body, expected(finish_reason="tool_calls", tool_calls=[
        {"index": 0, "id": "call_0", "name": "tool_add", "arguments": args,
         "id_generated": True}])


@fixture("crlf")
def _():
    text = "Lines end in CR LF here."
    body = ""
    for p in pieces(text, 5):
        body += data(chunk({"content": p}), eol="\r\n")
    body += data(chunk({}, "stop"), eol="\r\n") + done(eol="\r\n")
    return body, expected(content=text, finish_reason="stop")


@fixture("cr_only")
def _():
    text = "Old Mac line ends."
    body = ""
    for p in pieces(text, 5):
        body += data(chunk({"content": p}), eol="\r")
    body += data(chunk({}, "stop"), eol="\r") + done(eol="\r")
    return body, expected(content=text, finish_reason="stop")


@fixture("data_no_space")
def _():
    text = "No space after the colon."
    body = ""
    for p in pieces(text, 5):
        body += data(chunk({"content": p}), space=False)
    body += data(chunk({}, "stop"), space=False) + "data:[DONE]\n\n"
    return body, expected(content=text, finish_reason="stop")


@fixture("event_id_retry")
def _():
    text = "Events carry ids."
    body = "retry: 3000\n\n"
    for n, p in enumerate(pieces(text, 5)):
        body += "event: message\nid: %d\n" % n + data(chunk({"content": p}))
    body += "id: 99\nevent: message\n" + data(chunk({}, "stop"))
    body += "event: done\n" + done()
    return body, expected(content=text, finish_reason="stop")


@fixture("multiline_data")
def _():
    # One JSON value spread over several data lines (joined with "\n"), and
    # a comment line inside an event.
    body = ""
    for p in ["Multi", "-line", " data"]:
        obj = dumps(chunk({"content": p}))
        cut = obj.index('"choices"')
        body += "data: " + obj[:cut] + "\n: keep-alive\ndata: " + obj[cut:] + "\n\n"
    obj = dumps(chunk({}, "stop"), ascii_only=False)
    body += "data:" + obj.replace(",", ",\ndata:") + "\n\n" + done()
    return body, expected(content="Multi-line data", finish_reason="stop")


@fixture("utf8_split")
def _():
    # Raw multibyte text (the split tests cut it mid-sequence), escaped
    # non-ASCII, and a surrogate pair.
    raw = ["你好，", "世界 ", "Grüße ", "🚀 "]
    body = ""
    for p in raw:
        body += data(chunk({"content": p}))
    body += data(chunk({"content": "é😀"}), ascii_only=True)   # \u00e9\ud83d\ude00
    body += data(chunk({"content": " done"}))
    body += data(chunk({}, "stop")) + done()
    return body, expected(content="".join(raw) + "é😀 done", finish_reason="stop")


@fixture("escapes")
def _():
    text = 'Quote " backslash \\ slash / tab \t nl \n cr \r ctrl \u0001 \u001f end'
    body = data(chunk({"content": text}), ascii_only=True)
    body = body.replace("\\/", "/").replace(" slash / ", " slash \\/ ")
    body += data(chunk({}, "stop")) + done()
    return body, expected(content=text, finish_reason="stop")


@fixture("tool_args_30k")
def _():
    big = "".join("%05d," % i for i in range(5000))  # 30000 bytes
    args = dumps({"data": big, "note": "end"})
    body = data(chunk({"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": "call_big", "type": "function",
         "function": {"name": "tool_store", "arguments": args}}]}))
    body += data(chunk({}, "tool_calls")) + done()
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "call_big", "name": "tool_store",
                                       "arguments": args}])


@fixture("answer_4k")
def _():
    unit = "The quick brown fox jumps over the lazy dog — ünïcödé 狐狸. "
    text = ""
    while len(text.encode()) < 4096:
        text += unit
    text = text.encode()[:4096].decode("utf-8", "ignore")
    body = text_stream(text, size=3) + data(chunk({}, "stop")) + done()
    return body, expected(content=text, finish_reason="stop")


@fixture("midstream_error")
def _():
    body = data(chunk({"content": "Partial "}))
    body += data({"id": "gen-1", "object": "chat.completion.chunk", "created": CREATED,
                  "model": "x", "provider": "SomeProvider",
                  "error": {"code": 502, "message": "Provider returned error: upstream disconnected",
                            "metadata": {"raw": "..."}},
                  "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]})
    return body, expected(content="Partial ", error="server_error",
                          error_message="Provider returned error: upstream disconnected")


@fixture("event_error")
def _():
    body = data(chunk({"content": "Hi"}))
    body += "event: error\ndata: " + dumps({"error": {"type": "overloaded_error",
                                                    "message": "Overloaded"}}) + "\n\n"
    return body, expected(content="Hi", error="server_error", error_message="Overloaded")


@fixture("event_error_text")
def _():
    body = data(chunk({"content": "Hi"}))
    body += "event: error\ndata: rate limit exceeded, retry later\n\n"
    return body, expected(content="Hi", error="server_error",
                          error_message="rate limit exceeded, retry later")


@fixture("close_after_finish")
def _():
    # Some providers close the connection without [DONE]; the last event
    # has no trailing blank line either.
    text = "Closed without DONE."
    body = text_stream(text) + data(chunk({}, "stop"))[:-1]
    return body, expected(content=text, finish_reason="stop")


@fixture("close_after_finish_tool")
def _():
    args = '{"a": 1, "b": 2}'
    body = openai_call_fragments(0, "call_zz", "tool_add", args) + data(chunk({}, "tool_calls"))
    return body, expected(finish_reason="tool_calls",
                          tool_calls=[{"index": 0, "id": "call_zz", "name": "tool_add",
                                       "arguments": args}])


@fixture("cut_before_finish")
def _():
    args = '{"a": 1, "b": 2}'
    body = data(chunk({"content": "Let me call"}))
    body += openai_call_fragments(0, "call_cut", "tool_add", args)
    # Cut inside the next event, before any finish_reason.
    body += data(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "xx"}}]}))[:40]
    return body, expected(content="Let me call", error="truncated")


@fixture("cut_between_events")
def _():
    # Every event is whole, but no finish_reason ever came: still cut off.
    body = text_stream("Half an ans")
    return body, expected(content="Half an ans", error="truncated")


@fixture("duplicate_reasoning_keys")
def _():
    # Servers in transition send both keys with the same text.
    body = ""
    for p in ["Think", "ing."]:
        body += data(vllm_chunk({"reasoning_content": p, "reasoning": p}))
    body += data(vllm_chunk({"content": "Done."}))
    body += data(vllm_chunk({}, "stop")) + done()
    return body, expected(content="Done.", reasoning="Thinking.", finish_reason="stop")


@fixture("keepalive_and_empty_finish")
def _():
    # Comments between events, an empty data event, and finish_reason ""
    # where null is meant, before the real one.
    body = ": ping\n\n"
    body += data(chunk({"content": "A"}, finish=""))
    body += "data:\n\n: ping\n\n"
    body += data(chunk({"content": "B"}))
    body += data(chunk({}, "length")) + data(chunk({}, ""))
    body += done()
    return body, expected(content="AB", finish_reason="length")


def main():
    names = []
    for name, make in FIXTURES.items():
        body, exp = make()
        with open(os.path.join(HERE, name + ".sse"), "wb") as f:
            f.write(body.encode("utf-8"))
        with open(os.path.join(HERE, name + ".expected.json"), "w", encoding="utf-8") as f:
            json.dump(exp, f, ensure_ascii=False, indent=1)
            f.write("\n")
        names.append(name)
    print("wrote %d fixtures" % len(names))


if __name__ == "__main__":
    main()
