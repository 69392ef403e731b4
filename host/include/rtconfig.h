/*
 * rtconfig.h of the host port: the board configuration the simulator and the
 * tests are built with. Agent caps are generous here (64 KB, as behaviour.md
 * asks for the host); tests that exercise the limits set small caps at run
 * time instead.
 */
#ifndef RT_CONFIG_H__
#define RT_CONFIG_H__

/* Kernel */
#define RT_NAME_MAX 16
#define RT_ALIGN_SIZE 8
#define RT_TICK_PER_SECOND 1000
#define RT_USING_HEAP
#define RT_USING_CONSOLE
#define RT_CONSOLEBUF_SIZE 128
#define ULOG_LINE_BUF_SIZE 256
/* The host webclient speaks TLS (rustls), as a board with webclient's MbedTLS mode. */
#define WEBCLIENT_USING_MBED_TLS
#define RT_CONSOLE_DEVICE_NAME "uart0"
#define RT_USING_FINSH
#define FINSH_USING_MSH
#define RT_USING_ULOG
#define ARCH_CPU_64BIT

/* Packages */
#define PKG_USING_CJSON
#define PKG_USING_WEBCLIENT

/* Agent */
#define PKG_USING_AGENT
#define PKG_AGENT_API_KEY ""
#define PKG_AGENT_API_URL "http://127.0.0.1:8080/v1/chat/completions"
#define PKG_AGENT_MODEL_NAME "rtt-agent-sim"
#define PKG_AGENT_RESP_BUFSZ 65536
#define PKG_AGENT_WEB_SOCKET_BUFSZ 65536
#define PKG_AGENT_MAX_REASONING_LEN 65536
#define PKG_AGENT_MAX_CONTENT_LEN 65536
#define PKG_AGENT_STREAM_LINE_BUFSZ 65536
#define PKG_AGENT_MAX_TOOL_ARG_LEN 65536
#define PKG_AGENT_MESSAGE_TRIM 20
#define PKG_AGENT_MAX_TOKENS 4096
#define PKG_AGENT_MAX_TOOL_ROUNDS 10
#define PKG_AGENT_HTTP_TIMEOUT_MS 30000
#define PKG_AGENT_REQUEST_TIMEOUT_MS 120000
#define PKG_AGENT_HTTP_RETRIES 3
#define PKG_AGENT_RETRY_BASE_MS 500
#define PKG_AGENT_REPLY_TIMEOUT_MS 30000
#define PKG_AGENT_LOOP_STACK_SIZE 10240
#define PKG_AGENT_LOOP_PRIORITY 20
/* The host port builds every optional part (cargo feature all-parts): the
 * channels (the CLI one chosen), the line editor's history, agent_config and
 * agent_status. A library of fewer parts (cargo feature host-port without
 * all-parts) has its C compiled with AGENT_HOST_PARTS and each of its parts'
 * options instead, as a board with those options (build.rs). */
#ifndef AGENT_HOST_PARTS
#define PKG_AGENT_CLI_CHANNEL
#define AGENT_ALL_PARTS
#define PKG_AGENT_CLI_HISTORY
#define PKG_AGENT_MSH_EXTRAS
/* The MCP client is built (all-parts) with no server configured: tests add
 * theirs at run time. */
#define PKG_AGENT_MCP_CLIENT
#define PKG_AGENT_TOOL_OPTIONS
#define PKG_AGENT_NOTES
#define PKG_AGENT_SCHEDULE
#define PKG_AGENT_SUBAGENTS
#endif
#define PKG_AGENT_MCP_SERVERS ""
#define PKG_AGENT_MULTIMODAL_DISABLE
/* Multimodal options (used only with PKG_AGENT_MULTIMODAL_ENABLE). */
#define PKG_AGENT_FILE_OP_THREAD_SIZE 4096
#define PKG_AGENT_UPLOAD_URL "http://127.0.0.1:8081/upload"
#define PKG_AGENT_DOWNLOAD_URL "http://127.0.0.1:8081/download"

#endif
