/*
 * The C package's newest MQTT toolset (the .c files of its
 * src/tools/tool_mqtt/ and its src/tool_func.c, unchanged) on our library,
 * on the host port, with paho-mqtt in pipe mode. Driven by tests/upstream_mqtt_host.rs, which
 * builds it, runs the broker (mosquitto) and the scripted model, and checks
 * what the broker and the model saw.
 *
 *   mqtt_host broker MODEL_URL   the toolset against the broker the build
 *                                names (PKG_AGENT_TOOL_MQTT_BROKER_URL)
 *   mqtt_host unset MODEL_URL    built with the URL empty: the tools are
 *                                "not configured" and nothing connects
 *
 * It prints "@@ <step> ..." lines (stdout, line-buffered) for the test to
 * follow: "@@ rule-set" means the rule is in place and the agent idle, so
 * the test publishes to t/in now. It ends with "N passed, M failed".
 */
#include <rtthread.h>
#include <rt_host.h>
#include <stdio.h>
#include <string.h>
#include "AgentLoop.h"
#include "AgentConfig.h"
#include "AgentRuntime.h"
#include "MessageHub.h"
#include "tool_mqtt.h"
/* The toolset's own counters, read to check what it did with each message
 * (module-private in the C package, but plain globals). */
#include "tool_mqtt_internal.h"
#include "check.h"

/* The next reply on the output mailbox (`wait_ms` at most) contains `want`. */
static void expect_reply(MessageHub_t hub, const char *want, int wait_ms)
{
    Messages_t reply = hub ? message_hub_get_timeout(hub, hub->output_mailbox, rt_tick_from_millisecond(wait_ms))
                           : RT_NULL;
    CHECK(reply != RT_NULL);
    if (reply)
    {
        const char *text = messages_get_content_idx(reply, 0);
        printf("@@ reply %s\n", text ? text : "(null)");
        CHECK(text && strstr(text, want));
        messages_destroy(reply);
    }
}

/* Put a one-item text message from the user on the hub's input mailbox. */
static void say(MessageHub_t hub, const char *text)
{
    Messages_t m = messages_create(1);
    CHECK(m && messages_append(m, TYPE_TEXT, text) == RT_EOK);
    CHECK(hub && message_hub_put(hub, m, hub->input_mailbox) == RT_EOK);
}

/* Whether the thread `name` is gone (5 s at most): the host port frees a
 * thread's record when it has ended. */
static int thread_gone(const char *name)
{
    char buf[RT_NAME_MAX];
    strncpy(buf, name, sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    for (int i = 0; i < 500; i++)
    {
        if (rt_thread_find(buf) == RT_NULL)
            return 1;
        rt_thread_mdelay(10);
    }
    return 0;
}

/* Whether the toolset has counted `want` injections (5 s at most): its rx
 * thread counts one after agent_inject_text returned, so the agent's answer
 * may come first. */
static int injections_reach(rt_uint32_t want)
{
    for (int i = 0; i < 500; i++)
    {
        if (s_inject_total == want)
            return 1;
        rt_thread_mdelay(10);
    }
    return 0;
}

/* heap_used() once it reads `want` (5 s at most; the last value else). */
static rt_size_t heap_settles_at(rt_size_t want)
{
    rt_size_t used = heap_used();
    for (int i = 0; i < 500 && used != want; i++)
    {
        rt_thread_mdelay(10);
        used = heap_used();
    }
    return used;
}

/* What one rt_mutex costs on this heap: the toolset's s_lock, which it
 * creates on first use and never deletes. */
static rt_size_t mutex_cost(void)
{
    rt_size_t before = heap_used();
    rt_mutex_t m = rt_mutex_create("probe", RT_IPC_FLAG_PRIO);
    rt_size_t cost = heap_used() - before;
    CHECK(m != RT_NULL);
    CHECK(rt_mutex_delete(m) == RT_EOK);
    CHECK(heap_used() == before);
    return cost;
}

/* The toolset against the broker: subscribe, publish, a rule; a message
 * over the rule makes the agent answer on its own; disconnect; cleanup. */
static void with_broker(const char *model_url)
{
    rt_size_t mutex = mutex_cost();
    rt_size_t baseline = heap_used();
    printf("@@ broker %s\n", MQTT_SERVER_URI);

    agent_config_set("sk-test", "scripted", model_url);
    CHECK(main_loop_entry() == 0);
    MessageHub_t hub = agent_get_message_hub();
    CHECK(hub != RT_NULL);
    CHECK(!mqtt_tool_is_started());

    /* The model subscribes to t/in, publishes hello to t/out and sets the
     * rule temp > 30 on t/in, one call a round, then answers. */
    say(hub, "Watch t/in and tell me when temp goes above 30; say hello on t/out first.");
    expect_reply(hub, "Watching t/in", 30000);
    CHECK(mqtt_tool_is_started());
    CHECK(strcmp(mqtt_tool_conn_state(), "connected") == 0);
    CHECK(rt_thread_find("mqtt0") != RT_NULL);
    CHECK(rt_thread_find("mqtt_rx") != RT_NULL);
    CHECK(mqtt_tool_topic_count() == 2); /* agent/sub (auto-subscribed) and t/in */
    CHECK(s_inject_total == 0);
    printf("@@ rule-set\n");

    /* The test publishes {"temp":20} (under the rule: kept back) and then
     * {"temp":42}: the toolset injects the second, and the agent answers it
     * as a new user message. */
    expect_reply(hub, "temp is 42", 30000);
    CHECK(injections_reach(1));
    printf("@@ counters rx=%u suppressed=%u injected=%u alerts=%u dropped=%u\n", (unsigned)s_rx_total,
           (unsigned)s_suppressed_total, (unsigned)s_inject_total, (unsigned)s_alert_total,
           (unsigned)s_rx_dropped);
    CHECK(s_rx_total == 2);
    CHECK(s_suppressed_total == 1);
    CHECK(s_alert_total == 1);
    CHECK(s_rx_dropped == 0);

    /* The toolset's MSH command (its cmd.c; MSH_CMD_EXPORT registers it
     * through the host's finsh.h) shows the same state. */
    static char status[4096];
    rt_host_console_capture(RT_TRUE);
    int rc = rt_host_msh_exec("mqtt_tool status");
    rt_host_console_take(status, sizeof(status));
    rt_host_console_capture(RT_FALSE);
    printf("@@ mqtt_tool status -> %d\n%s\n", rc, status);
    CHECK(rc == 0);
    CHECK(strstr(status, "client: started=1 connected=1 broker=" MQTT_SERVER_URI " client_id=rt-thread-agent"));
    CHECK(strstr(status, "topic=t/in want=1 mode=filter registered=1 subscribed=1 rx=2 injected=1 suppressed=1"));
    CHECK(strstr(status, "topic=t/in temp (json path) > 30 triggered_now=1 alert_count=1"));

    /* The model disconnects: the rx thread stops, paho's worker sends
     * DISCONNECT and frees its buffers, semaphore and pipe, and ends. */
    say(hub, "Stop watching and disconnect.");
    expect_reply(hub, "Disconnected", 30000);
    CHECK(!mqtt_tool_is_started());
    CHECK(strcmp(mqtt_tool_conn_state(), "stopped") == 0);
    CHECK(thread_gone("mqtt_rx"));
    CHECK(thread_gone("mqtt0"));

    CHECK(cleanup_agent_entry() == 0);
    CHECK(agent_get_message_hub() == RT_NULL);
    CHECK(agent_inject_text("after the end") == RT_ERROR);

    /* Everything back but the toolset's s_lock (kept by design). */
    rt_size_t used = heap_settles_at(baseline + mutex);
    printf("@@ heap baseline=%zu end=%zu kept=%ld mutex=%zu\n", (size_t)baseline, (size_t)used,
           (long)used - (long)baseline, (size_t)mutex);
    CHECK(s_lock != RT_NULL);
    CHECK(used == baseline + mutex);
}

/* Built with PKG_AGENT_TOOL_MQTT_BROKER_URL "": the model's mqtt_publish
 * is answered "not configured" by the loop, and the tool never runs. */
static void without_broker(const char *model_url)
{
    rt_size_t baseline = heap_used();
    printf("@@ broker \"%s\"\n", MQTT_SERVER_URI);

    agent_config_set("sk-test", "scripted", model_url);
    CHECK(main_loop_entry() == 0);
    MessageHub_t hub = agent_get_message_hub();
    CHECK(hub != RT_NULL);

    say(hub, "Say hello on t/out.");
    expect_reply(hub, "MQTT is not configured", 30000);
    /* Nothing started: no client, no paho worker, no rx thread, no lock. */
    CHECK(!mqtt_tool_is_started());
    CHECK(strcmp(mqtt_tool_conn_state(), "stopped") == 0);
    CHECK(rt_thread_find("mqtt0") == RT_NULL);
    CHECK(rt_thread_find("mqtt_rx") == RT_NULL);
    CHECK(s_lock == RT_NULL);
    CHECK(s_rx_queue == RT_NULL);

    CHECK(cleanup_agent_entry() == 0);
    rt_size_t used = heap_settles_at(baseline);
    printf("@@ heap baseline=%zu end=%zu kept=%ld\n", (size_t)baseline, (size_t)used,
           (long)used - (long)baseline);
    CHECK(used == baseline);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3 || (strcmp(argv[1], "broker") != 0 && strcmp(argv[1], "unset") != 0))
    {
        fprintf(stderr, "usage: %s broker|unset MODEL_URL\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "broker") == 0)
        with_broker(argv[2]);
    else
        without_broker(argv[2]);
    return CHECK_DONE();
}
