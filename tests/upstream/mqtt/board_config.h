/*
 * Force-included (-include) into every C file of the upstream MQTT host
 * build (tests/upstream_mqtt_host.rs): what a board's rtconfig.h says on top
 * of the host port's host/include/rtconfig.h when menuconfig has
 * PKG_AGENT_TOOL_MQTT_ENABLE on, with our packages/Kconfig's defaults, and
 * paho-mqtt in pipe mode as our Kconfig help asks. The broker URL comes
 * from the command line (-DPKG_AGENT_TOOL_MQTT_BROKER_URL=...): the test's
 * own mosquitto, or "" (our default: the tools answer "not configured").
 */
#ifndef RT_HOST_TEST_MQTT_BOARD_CONFIG_H__
#define RT_HOST_TEST_MQTT_BOARD_CONFIG_H__

/* Kernel: the two values of a real rtconfig.h / rtdef.h that paho reads and
 * the host port's headers do not define (paho only compares RT_VER_NUM with
 * 0x50000, for rt_align against ALIGN). */
#define RT_VER_NUM 0x50200
#define RT_THREAD_PRIORITY_MAX 32
/* What PAHOMQTT_PIPE_MODE selects, and RT_USING_POSIX_PIPE with DFS: the
 * struct MQTTClient of paho_mqtt.h has its pipe members only with these,
 * so paho and the tool files must both see them. */
#define RT_USING_POSIX_FS
#define RT_USING_POSIX_PIPE
#define RT_USING_SAL
#define SAL_USING_POSIX

/* paho-mqtt (iot/pahomqtt/Kconfig), as the toolset's help asks */
#define PKG_USING_PAHOMQTT
#define PAHOMQTT_PIPE_MODE
#define PKG_PAHOMQTT_SUBSCRIBE_HANDLERS 4
#define RT_PKG_MQTT_THREAD_STACK_SIZE 8192

/* The MQTT toolset, our packages/Kconfig's defaults */
#define PKG_AGENT_TOOL_MQTT_ENABLE
#define PKG_AGENT_TOOL_MQTT_CLIENT_ID "rt-thread-agent"
#define PKG_AGENT_TOOL_MQTT_USERNAME ""
#define PKG_AGENT_TOOL_MQTT_PASSWORD ""
#define PKG_AGENT_TOOL_MQTT_WILLMSG "Goodbye from RT-Thread Agent"
#define PKG_AGENT_TOOL_MQTT_KEEPALIVE_SEC 60
#define PKG_AGENT_TOOL_MQTT_QOS 1
#define PKG_AGENT_TOOL_MQTT_PUB_TOPIC "agent/pub"
#define PKG_AGENT_TOOL_MQTT_SUB_TOPIC "agent/sub"
#define PKG_AGENT_TOOL_MQTT_DEFAULT_MODE_FILTER
#define PKG_AGENT_TOOL_MQTT_AUTO_SUB_DEFAULT
#define PKG_AGENT_TOOL_MQTT_BUF_SIZE 1024
#define PKG_AGENT_TOOL_MQTT_MAX_SUB_TOPICS 4
#define PKG_AGENT_TOOL_MQTT_MAX_RULES 4
#define PKG_AGENT_TOOL_MQTT_TOPIC_MAX_LEN 64
#define PKG_AGENT_TOOL_MQTT_PAYLOAD_MAX_LEN 256
#define PKG_AGENT_TOOL_MQTT_MAX_PUB_LEN 256
#define PKG_AGENT_TOOL_MQTT_FIELD_MAX_LEN 24
#define PKG_AGENT_TOOL_MQTT_LAST_PAYLOAD_LEN 96
#define PKG_AGENT_TOOL_MQTT_HISTORY_DEPTH 8
#define PKG_AGENT_TOOL_MQTT_HISTORY_PAYLOAD_LEN 128
#define PKG_AGENT_TOOL_MQTT_RX_QUEUE_DEPTH 16
#define PKG_AGENT_TOOL_MQTT_POLL_DEPTH 8
#define PKG_AGENT_TOOL_MQTT_INJECT_MIN_INTERVAL_MS 1000
#define PKG_AGENT_TOOL_MQTT_INJECT_BATCH_MAX 5
#define PKG_AGENT_TOOL_MQTT_BUSY_WAIT_MS 180000
#define PKG_AGENT_TOOL_MQTT_ALERT_COOLDOWN_MS 60000
#define PKG_AGENT_TOOL_MQTT_LOCK_WAIT_MS 1000
#define PKG_AGENT_TOOL_MQTT_CONNECT_WAIT_MS 3000
#define PKG_AGENT_TOOL_MQTT_SUB_WAIT_MS 3000
#define PKG_AGENT_TOOL_MQTT_RX_THREAD_STACK 3072
#define PKG_AGENT_TOOL_MQTT_RX_THREAD_PRIO 15

#endif
