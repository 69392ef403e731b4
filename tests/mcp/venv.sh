# The official MCP Python SDK (`mcp` from PyPI, MIT) and its whole dependency
# set, pinned, in target/mcp-venv (tests/lib/pyvenv.sh checks every licence).
# Sourced by the MCP tests; prints nothing when the venv is ready.
# shellcheck shell=bash
. tests/lib/deps.sh
. tests/lib/pyvenv.sh
MCP_VENV=${MCP_VENV:-target/mcp-venv}
py_venv "$MCP_VENV" mcp.client.streamable_http \
    mcp==2.3.0 mcp-types==2.3.0 annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 \
    cffi==2.1.1 click==8.5.1 cryptography==50.0.2 h11==0.16.0 httpcore2==2.16.2 \
    httpx2==2.16.2 idna==3.20 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 \
    opentelemetry-api==1.45.2 pycparser==3.12 pydantic==2.14.4 pydantic_core==2.50.5 \
    PyJWT==2.15.1 python-multipart==0.0.34 referencing==0.37.0 rpds-py==2026.9.1 \
    sse-starlette==3.7.0 starlette==1.10.0 truststore==0.10.5 typing_extensions==4.16.0 \
    typing-inspection==0.4.5 uvicorn==0.54.0
