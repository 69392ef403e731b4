/*
 * Stand-in rtconfig.h for the cross-build link check: a small board with
 * finsh, ulog, cJSON and webclient, and the Agent package at the defaults of
 * packages/Kconfig. Written for these tests.
 */
#ifndef RT_CONFIG_H__
#define RT_CONFIG_H__

#define RT_NAME_MAX 8
#define RT_THREAD_PRIORITY_MAX 32
#define RT_ALIGN_SIZE 8
#define RT_TICK_PER_SECOND 1000
#define RT_USING_HEAP
#define RT_USING_CONSOLE
#define RT_CONSOLEBUF_SIZE 128
#define RT_CONSOLE_DEVICE_NAME "uart0"
#define RT_USING_FINSH
#define FINSH_USING_MSH
#define RT_USING_ULOG

#define PKG_USING_CJSON
#define PKG_USING_WEBCLIENT
#define PKG_USING_MBEDTLS

#define PKG_USING_AGENT
#define PKG_AGENT_API_KEY "sk-**-**"
#define PKG_AGENT_MODEL_NAME "deepseek-ai/DeepSeek-V4-Pro"
#define PKG_AGENT_API_URL "https://api.siliconflow.cn/v1/chat/completions"
#define PKG_AGENT_MULTIMODAL_DISABLE
#define PKG_AGENT_WEB_SOCKET_BUFSZ 2048
#define PKG_AGENT_RESP_BUFSZ 2048
#define PKG_AGENT_MAX_REASONING_LEN 8192
#define PKG_AGENT_MAX_CONTENT_LEN 8192
#define PKG_AGENT_STREAM_LINE_BUFSZ 1024
#define PKG_AGENT_MAX_TOOL_ARG_LEN 1024
#define PKG_AGENT_MESSAGE_TRIM 6
#define PKG_AGENT_MAX_TOKENS 4096
#define PKG_AGENT_MAX_TOOL_ROUNDS 10
#define PKG_AGENT_HTTP_TIMEOUT_MS 30000
#define PKG_AGENT_HTTP_RETRIES 3
#define PKG_AGENT_RETRY_BASE_MS 500
#define PKG_AGENT_REPLY_TIMEOUT_MS 30000
#define PKG_AGENT_LOOP_STACK_SIZE 10240
#define PKG_AGENT_LOOP_PRIORITY 20
#define PKG_AGENT_CLI_CHANNEL
#define PKG_AGENT_PREBUILT_LIB ""
#define PKG_AGENT_RUST_TARGET ""
#define PKG_USING_AGENT_LATEST_VERSION
#define PKG_AGENT_VER "latest"

#endif
