# Seeds for the MCP fuzz target (fuzz/fuzz_targets/mcp.rs): whole requests;
# SID stands for a live session's id, TOK for the server's bearer token.
# Usage: bash tests/mcp/fuzz_seeds.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
seed() { # name body [extra header lines]
    local name=$1 body=$2 extra=${3:-}
    printf 'POST /mcp HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s' \
        "$extra" "${#body}" "$body" > "$dir/$name"
}
auth=$'Authorization: Bearer TOK\r\n'
sid=$'Mcp-Session-Id: SID\r\n'"$auth"
seed initialize '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}' "$auth"
seed no_token '{"jsonrpc":"2.0","id":1,"method":"ping"}' $'Mcp-Session-Id: SID\r\n'
seed wrong_token '{"jsonrpc":"2.0","id":1,"method":"ping"}' $'Mcp-Session-Id: SID\r\nAuthorization: Bearer TOKx\r\n'
seed lower_bearer '{"jsonrpc":"2.0","id":1,"method":"ping"}' $'Mcp-Session-Id: SID\r\nauthorization:   bearer   TOK  \r\n'
seed basic '{"jsonrpc":"2.0","id":1,"method":"ping"}' $'Mcp-Session-Id: SID\r\nAuthorization: Basic VE9LOg==\r\n'
seed two_auth '{"jsonrpc":"2.0","id":1,"method":"ping"}' $'Mcp-Session-Id: SID\r\nAuthorization: Bearer x\r\nAuthorization: Bearer TOK\r\n'
seed initialized '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$sid"
seed ping '{"jsonrpc":"2.0","id":"p","method":"ping"}' "$sid"$'MCP-Protocol-Version: 2025-11-25\r\n'
seed list '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2"}}' "$sid"
seed call '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3.5}}}' "$sid"
seed call_bad '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"compare","arguments":{"a":"x"}}}' "$sid"
seed batch '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' "$sid"
seed origin '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$sid"$'Origin: http://a\r\nAuthorization: Bearer x\r\n'
printf 'DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: SID\r\nAuthorization: Bearer TOK\r\n\r\n' > "$dir/delete"
printf 'GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer TOK\r\n\r\n' > "$dir/get"
# 2026-07-28: no session; the envelope in params._meta, the routing headers.
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
# Its header lines (the trailing x keeps $(...) from eating the last \n).
modern() { printf '%sMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: %s\r\n%sx' "$auth" "$1" "${2:-}"; }
m() { hdr=$(modern "$@"); hdr=${hdr%x}; }
m server/discover; seed m_discover '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{'"$meta"'}}' "$hdr"
m tools/list; seed m_list '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2",'"$meta"'}}' "$hdr"
m tools/call $'Mcp-Name: add\r\n'; seed m_call '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},'"$meta"'}}' "$hdr"
m tools/call $'Mcp-Name: =?base64?YWRk?=\r\n'; seed m_call_b64 '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},'"$meta"'}}' "$hdr"
m tools/list; seed m_no_meta '{"jsonrpc":"2.0","id":4,"method":"tools/list"}' "$hdr"
m tools/list $'Mcp-Method: tools/list\r\n'; seed m_twice '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{'"$meta"'}}' "$hdr"
m ping; seed m_ping '{"jsonrpc":"2.0","id":6,"method":"ping","params":{'"$meta"'}}' "$hdr"
m notifications/cancelled; seed m_note '{"jsonrpc":"2.0","method":"notifications/cancelled"}' "$hdr"
seed m_unknown '{"jsonrpc":"2.0","id":7,"method":"tools/list"}' "$auth"$'MCP-Protocol-Version: 2099-01-01\r\n'
