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
