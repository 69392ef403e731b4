/*
 * Compiled with the board's headers: turns rtconfig.h and rtthread.h into
 * values the Rust library reads at run time. New options get defaults here so
 * an old rtconfig.h (from the C package's Kconfig) still builds.
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"
#include "MessageHub.h"
#include "AgentConfig.h"

/* PKG_AGENT_PROFILE_SMALL: the defaults for boards under 128 KB of RAM,
 * chosen from what QEMU's lm3s6965evb (64 KB) measured (docs/small-boards.md).
 * packages/Kconfig has the same pairs (tests/scons checks they agree). */
#ifdef PKG_AGENT_PROFILE_SMALL
#define AGENT_SMALL_OR(small, normal) (small)
#else
#define AGENT_SMALL_OR(small, normal) (normal)
#endif

#ifndef PKG_AGENT_API_KEY
#define PKG_AGENT_API_KEY ""
#endif
#ifndef PKG_AGENT_API_URL
#define PKG_AGENT_API_URL ""
#endif
#ifndef PKG_AGENT_MODEL_NAME
#define PKG_AGENT_MODEL_NAME ""
#endif
#ifndef PKG_AGENT_RESP_BUFSZ
#define PKG_AGENT_RESP_BUFSZ AGENT_SMALL_OR(1024, 2048)
#endif
#ifndef PKG_AGENT_WEB_SOCKET_BUFSZ
#define PKG_AGENT_WEB_SOCKET_BUFSZ AGENT_SMALL_OR(1024, 2048)
#endif
#ifndef PKG_AGENT_MAX_REASONING_LEN
#define PKG_AGENT_MAX_REASONING_LEN AGENT_SMALL_OR(1024, 8192)
#endif
#ifndef PKG_AGENT_MAX_CONTENT_LEN
#define PKG_AGENT_MAX_CONTENT_LEN AGENT_SMALL_OR(2048, 8192)
#endif
#ifndef PKG_AGENT_STREAM_LINE_BUFSZ
#define PKG_AGENT_STREAM_LINE_BUFSZ 1024
#endif
#ifndef PKG_AGENT_MAX_TOOL_ARG_LEN
#define PKG_AGENT_MAX_TOOL_ARG_LEN AGENT_SMALL_OR(512, 1024)
#endif
#ifndef PKG_AGENT_MESSAGE_TRIM
#define PKG_AGENT_MESSAGE_TRIM AGENT_SMALL_OR(4, 6)
#endif
#ifndef PKG_AGENT_MAX_TOKENS
#define PKG_AGENT_MAX_TOKENS 4096
#endif
#ifndef PKG_AGENT_MAX_TOOL_ROUNDS
#define PKG_AGENT_MAX_TOOL_ROUNDS 10
#endif
#ifndef PKG_AGENT_HTTP_TIMEOUT_MS
#define PKG_AGENT_HTTP_TIMEOUT_MS 30000
#endif
#ifndef PKG_AGENT_REQUEST_TIMEOUT_MS
#define PKG_AGENT_REQUEST_TIMEOUT_MS 120000
#endif
#ifndef PKG_AGENT_HTTP_RETRIES
#define PKG_AGENT_HTTP_RETRIES 3
#endif
#ifndef PKG_AGENT_RETRY_BASE_MS
#define PKG_AGENT_RETRY_BASE_MS 500
#endif
#ifndef PKG_AGENT_LOOP_STACK_SIZE
#define PKG_AGENT_LOOP_STACK_SIZE AGENT_SMALL_OR(4096, 10240)
#endif
/* A sub-agent's turn runs inside the tool call of the loop's turn: about
 * 1.5 KB more of the loop's stack than a turn alone (tests/cross/run.sh's
 * report: the loop thread's deepest chain through a sub-agent). */
#if defined(PKG_AGENT_SUBAGENTS) && PKG_AGENT_LOOP_STACK_SIZE < 6144
#warning "PKG_AGENT_SUBAGENTS: a sub-agent runs on the loop's stack; PKG_AGENT_LOOP_STACK_SIZE below 6144 may overflow"
#endif
#ifndef PKG_AGENT_LOOP_PRIORITY
#define PKG_AGENT_LOOP_PRIORITY 20
#endif
#ifndef PKG_AGENT_REPLY_TIMEOUT_MS
#define PKG_AGENT_REPLY_TIMEOUT_MS 30000
#endif
#ifndef PKG_AGENT_UPLOAD_URL
#define PKG_AGENT_UPLOAD_URL ""
#endif
#ifndef PKG_AGENT_DOWNLOAD_URL
#define PKG_AGENT_DOWNLOAD_URL ""
#endif
#ifndef PKG_AGENT_FILE_OP_THREAD_SIZE
#define PKG_AGENT_FILE_OP_THREAD_SIZE 4096
#endif
#ifndef PKG_AGENT_CLI_STACK_SIZE
#define PKG_AGENT_CLI_STACK_SIZE AGENT_SMALL_OR(2048, 4096)
#endif
#ifndef PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE
#define PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE 1048576
#endif
/* PKG_AGENT_MULTIMODAL_ENABLE alone (an rtconfig.h of the C package) is the
 * C package's upload mode. */
#if defined(PKG_AGENT_MULTIMODAL_ENABLE) && defined(PKG_AGENT_MULTIMODAL_INLINE)
#define AGENT_MULTIMODAL_MODE 2
#elif defined(PKG_AGENT_MULTIMODAL_ENABLE)
#define AGENT_MULTIMODAL_MODE 1
#else
#define AGENT_MULTIMODAL_MODE 0
#endif
#ifndef RT_CONSOLE_DEVICE_NAME
#define RT_CONSOLE_DEVICE_NAME "uart"
#endif
#ifdef PKG_AGENT_DROP_REASONING
#define AGENT_KEEP_REASONING 0
#else
#define AGENT_KEEP_REASONING 1
#endif

/* The Rust side sizes C enums as the target's default ABI does: one byte on
 * bare-metal ARM (gcc's default -fshort-enums there), an int elsewhere. A
 * board that changes the default would silently disagree: refuse instead. */
#if defined(__arm__) && !defined(__linux__)
_Static_assert(sizeof(MessageType) == 1, "rtt-agent: arm-none-eabi boards must keep gcc's default -fshort-enums");
#else
_Static_assert(sizeof(MessageType) == sizeof(int), "rtt-agent needs int-sized enums (no -fshort-enums)");
#endif

const struct agent_board_config agent_board_config = {
    .struct_size = sizeof(struct agent_board_config),
    .rt_eok = RT_EOK,
    .rt_error = RT_ERROR,
    .rt_etimeout = RT_ETIMEOUT,
    .rt_efull = RT_EFULL,
    .rt_eempty = RT_EEMPTY,
    .rt_enomem = RT_ENOMEM,
    .rt_einval = RT_EINVAL,
    .align_size = RT_ALIGN_SIZE,
    .tick_per_second = RT_TICK_PER_SECOND,
    .api_key = PKG_AGENT_API_KEY,
    .api_url = PKG_AGENT_API_URL,
    .model_name = PKG_AGENT_MODEL_NAME,
    .resp_bufsz = PKG_AGENT_RESP_BUFSZ,
    .web_socket_bufsz = PKG_AGENT_WEB_SOCKET_BUFSZ,
    .max_reasoning_len = PKG_AGENT_MAX_REASONING_LEN,
    .max_content_len = PKG_AGENT_MAX_CONTENT_LEN,
    .stream_line_bufsz = PKG_AGENT_STREAM_LINE_BUFSZ,
    .max_tool_arg_len = PKG_AGENT_MAX_TOOL_ARG_LEN,
    .message_trim = PKG_AGENT_MESSAGE_TRIM,
    .max_tokens = PKG_AGENT_MAX_TOKENS,
    .max_tool_rounds = PKG_AGENT_MAX_TOOL_ROUNDS,
    .http_timeout_ms = PKG_AGENT_HTTP_TIMEOUT_MS,
    .http_retries = PKG_AGENT_HTTP_RETRIES,
    .retry_base_ms = PKG_AGENT_RETRY_BASE_MS,
    .keep_reasoning = AGENT_KEEP_REASONING,
    .loop_stack_size = PKG_AGENT_LOOP_STACK_SIZE,
    .loop_priority = PKG_AGENT_LOOP_PRIORITY,
    .reply_timeout_ms = PKG_AGENT_REPLY_TIMEOUT_MS,
    .console_device = RT_CONSOLE_DEVICE_NAME,
#if defined(WEBCLIENT_USING_MBED_TLS) || defined(WEBCLIENT_USING_SAL_TLS)
    .webclient_tls = 1,
#else
    .webclient_tls = 0,
#endif
    .request_timeout_ms = PKG_AGENT_REQUEST_TIMEOUT_MS,
    .multimodal_mode = AGENT_MULTIMODAL_MODE,
    .upload_url = PKG_AGENT_UPLOAD_URL,
    .download_url = PKG_AGENT_DOWNLOAD_URL,
    .file_op_thread_size = PKG_AGENT_FILE_OP_THREAD_SIZE,
    .multimodal_max_bytes = PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE,
    .cli_stack_size = PKG_AGENT_CLI_STACK_SIZE,
};

/* PKG_AGENT_API_FORMAT: the wire format of the chat requests ("openai",
 * "anthropic", "ollama"; "" or "auto": the URL decides). Read only by the
 * provider-anthropic / provider-ollama builds; --gc-sections drops it from
 * the others. */
#ifndef PKG_AGENT_API_FORMAT
#define PKG_AGENT_API_FORMAT ""
#endif
const char agent_api_format[] = PKG_AGENT_API_FORMAT;

/* 1 when the C package's MQTT toolset is built (PKG_AGENT_TOOL_MQTT_ENABLE)
 * without a broker (PKG_AGENT_TOOL_MQTT_BROKER_URL empty, the default): the
 * loop then answers its tools' calls with "not configured" instead of
 * letting them try to connect. */
#if defined(PKG_AGENT_TOOL_MQTT_ENABLE) && defined(PKG_AGENT_TOOL_MQTT_BROKER_URL)
const int agent_mqtt_broker_unset = sizeof(PKG_AGENT_TOOL_MQTT_BROKER_URL) <= 1;
#else
const int agent_mqtt_broker_unset = 0;
#endif

/* The runtime configuration lives here, not in Rust, so that its alignment
 * is the board's rt_align(RT_ALIGN_SIZE) exactly as AgentConfig.h declares. */
agent_runtime_config_t agent_runtime_config_storage;
