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
 * The agent runs with the host's channel, the CLI chat on the console, and
 * this program is its user: it types each line into the console and reads
 * the reply where the user reads it, on the console (captured). The CLI is
 * then the only reader of the agent's output mailbox, as on a board: the
 * reply to the message the toolset injects is shown by the chat while it
 * waits for a line, and nothing races it for the reply.
 *
 * It prints "@@ <step> ..." lines (stdout, line-buffered) for the test to
 * follow: "@@ rule-set" means the rule is in place and the agent idle, so
 * the test publishes to t/in now. The console goes to stderr as it is read.
 * It ends with "N passed, M failed".
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

/* The console as the user sees it: what was captured and not yet matched
 * by screen_wait (the capture is on for the whole run). */
#define SCREEN_BYTES (512 * 1024)
static char screen[SCREEN_BYTES + 1];
static size_t screen_len;

/* Move what the console printed since the last pull to the screen (and to
 * stderr, for the test's log). */
static void screen_pull(void)
{
    static char chunk[256 * 1024 + 1];
    size_t total = rt_host_console_take(chunk, sizeof(chunk));
    size_t n = total < sizeof(chunk) - 1 ? total : sizeof(chunk) - 1;
    if (n == 0)
        return;
    fwrite(chunk, 1, n, stderr);
    if (n > SCREEN_BYTES - screen_len)
    {
        /* Keep the newest: drop the oldest unmatched text. */
        size_t drop = n - (SCREEN_BYTES - screen_len);
        if (drop > screen_len)
            drop = screen_len;
        memmove(screen, screen + drop, screen_len - drop);
        screen_len -= drop;
        if (n > SCREEN_BYTES)
            n = SCREEN_BYTES;
    }
    memcpy(screen + screen_len, chunk, n);
    screen_len += n;
    screen[screen_len] = '\0';
}

/* Whether `want` shows on the console (`wait_ms` at most); the screen is
 * then consumed up to its end, so the next wait looks after it. The line
 * it is on is printed as "@@ console ...". */
static int screen_wait(const char *want, int wait_ms)
{
    for (int waited = 0;; waited += 10)
    {
        screen_pull();
        char *at = strstr(screen, want);
        if (at)
        {
            char *start = at, *end = at + strlen(want);
            while (start > screen && start[-1] != '\n' && start[-1] != '\r')
                start--;
            size_t line = strcspn(at, "\r\n");
            printf("@@ console %.*s\n", (int)(at - start + line), start);
            screen_len -= (size_t)(end - screen);
            memmove(screen, end, screen_len + 1);
            return 1;
        }
        if (waited >= wait_ms)
        {
            printf("@@ console: no \"%s\" within %d ms\n", want, wait_ms);
            return 0;
        }
        rt_thread_mdelay(10);
    }
}

/* Type a line into the chat and wait for its whole reply, which contains
 * `want`: the chat's "agent> ", the text, and the prompt that follows it. */
static void ask(const char *line, const char *want, int wait_ms)
{
    rt_host_console_input(line, strlen(line));
    rt_host_console_input("\r", 1);
    CHECK(screen_wait("agent> ", 5000));
    CHECK(screen_wait(want, wait_ms));
    CHECK(screen_wait("you> ", 5000));
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
    CHECK(agent_get_message_hub() != RT_NULL);
    CHECK(!mqtt_tool_is_started());
    CHECK(screen_wait("you> ", 10000)); /* the chat is open */

    /* The model subscribes to t/in, publishes hello to t/out and sets the
     * rule temp > 30 on t/in, one call a round, then answers. */
    ask("Watch t/in and tell me when temp goes above 30; say hello on t/out first.", "Watching t/in", 30000);
    CHECK(mqtt_tool_is_started());
    CHECK(strcmp(mqtt_tool_conn_state(), "connected") == 0);
    CHECK(rt_thread_find("mqtt0") != RT_NULL);
    CHECK(rt_thread_find("mqtt_rx") != RT_NULL);
    CHECK(mqtt_tool_topic_count() == 2); /* agent/sub (auto-subscribed) and t/in */
    CHECK(s_inject_total == 0);
    printf("@@ rule-set\n");

    /* The test publishes {"temp":20} (under the rule: kept back) and then
     * {"temp":42}: the toolset injects the second, and the agent answers it
     * as a new user message. The chat, waiting for a line, shows the
     * answer, then its prompt again (it took the reply off the mailbox). */
    CHECK(screen_wait("temp is 42", 30000));
    CHECK(screen_wait("you> ", 5000));
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
    screen_pull();
    size_t before = screen_len;
    int rc = rt_host_msh_exec("mqtt_tool status");
    screen_pull();
    const char *status = screen + before;
    printf("@@ mqtt_tool status -> %d\n%s\n", rc, status);
    CHECK(rc == 0);
    CHECK(strstr(status, "client: started=1 connected=1 broker=" MQTT_SERVER_URI " client_id=rt-thread-agent"));
    CHECK(strstr(status, "topic=t/in want=1 mode=filter registered=1 subscribed=1 rx=2 injected=1 suppressed=1"));
    CHECK(strstr(status, "topic=t/in temp (json path) > 30 triggered_now=1 alert_count=1"));

    /* The model disconnects: the rx thread stops, paho's worker sends
     * DISCONNECT and frees its buffers, semaphore and pipe, and ends. */
    ask("Stop watching and disconnect.", "Disconnected", 30000);
    CHECK(!mqtt_tool_is_started());
    CHECK(strcmp(mqtt_tool_conn_state(), "stopped") == 0);
    CHECK(thread_gone("mqtt_rx"));
    CHECK(thread_gone("mqtt0"));

    /* Ctrl-D leaves the chat, as a user would. */
    rt_host_console_input("\x04", 1);
    CHECK(screen_wait("leaving the agent chat", 5000));
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
    CHECK(agent_get_message_hub() != RT_NULL);
    CHECK(screen_wait("you> ", 10000));

    ask("Say hello on t/out.", "MQTT is not configured", 30000);
    /* Nothing started: no client, no paho worker, no rx thread, no lock. */
    CHECK(!mqtt_tool_is_started());
    CHECK(strcmp(mqtt_tool_conn_state(), "stopped") == 0);
    CHECK(rt_thread_find("mqtt0") == RT_NULL);
    CHECK(rt_thread_find("mqtt_rx") == RT_NULL);
    CHECK(s_lock == RT_NULL);
    CHECK(s_rx_queue == RT_NULL);

    rt_host_console_input("\x04", 1);
    CHECK(screen_wait("leaving the agent chat", 5000));
    CHECK(cleanup_agent_entry() == 0);
    rt_size_t used = heap_settles_at(baseline);
    printf("@@ heap baseline=%zu end=%zu kept=%ld\n", (size_t)baseline, (size_t)used,
           (long)used - (long)baseline);
    CHECK(used == baseline);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* The console, with the chat on it, is read from the capture. */
    rt_host_console_capture(RT_TRUE);
    if (argc != 3 || (strcmp(argv[1], "broker") != 0 && strcmp(argv[1], "unset") != 0))
    {
        fprintf(stderr, "usage: %s broker|unset MODEL_URL\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "broker") == 0)
        with_broker(argv[2]);
    else
        without_broker(argv[2]);
    screen_pull();
    rt_host_console_capture(RT_FALSE);
    return CHECK_DONE();
}
