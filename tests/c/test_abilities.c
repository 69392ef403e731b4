/*
 * AgentExt.h's abilities from C, as a board's code uses them, against the
 * real agent loop and the scripted model at argv[1]:
 * - append_tool_ex: a direct-output tool whose text is the reply (the model
 *   asked once), and a tool that reads agent_tool_deadline_ms();
 * - agent_schedule_add/del/set_sink: a prompt every second, its replies
 *   handed to the sink, none after del (the file is RTT_AGENT_SCHEDULE_FILE);
 * - agent_profile_add/del: refusals and a profile kept until removed.
 * The heap is back at its first figure after cleanup.
 */
#include <rtthread.h>
#include <rt_host.h>
#include <string.h>
#include "AgentLoop.h"
#include "AgentConfig.h"
#include "AgentExt.h"
#include "AgentRuntime.h"
#include "MessageHub.h"
#include "tool_base.h"
#include "utils.h"
#include "CLI.h"
#include "check.h"

static void answer(AgentToolNode_t node, const char *text, rt_err_t ret)
{
    if (node->ret.messages)
        messages_destroy(node->ret.messages);
    node->ret.messages = messages_create(1);
    node->ret.ret = node->ret.messages && messages_append(node->ret.messages, TYPE_TEXT, text) == RT_EOK ? ret : RT_ERROR;
}

/* Direct output: its text is the user's answer. */
static void board_state(cJSON *args, AgentToolNode_t node)
{
    (void)args;
    answer(node, "LED on, 23.5 C", RT_EOK);
}

/* Reads what is left of its 300 ms; says whether it was in range. */
static volatile rt_int32_t left_seen = -2;
static void timed(cJSON *args, AgentToolNode_t node)
{
    (void)args;
    left_seen = agent_tool_deadline_ms();
    answer(node, left_seen > 0 && left_seen <= 300 ? "deadline ok" : "deadline wrong", RT_EOK);
}

static void register_tool(const char *name, void (*fn)(cJSON *, AgentToolNode_t), const agent_tool_options_t *o)
{
    cJSON *params = create_param_obj(cJSON_CreateObject(), cJSON_CreateArray());
    cJSON *item = create_tool_item(name, "a test tool", params);
    CHECK(item != RT_NULL);
    CHECK(append_tool_ex(item, fn, o) == RT_EOK);
}

static void ask(MessageHub_t hub, const char *text, const char *want)
{
    Messages_t m = messages_create(1);
    CHECK(m && messages_append(m, TYPE_TEXT, text) == RT_EOK);
    CHECK(hub && message_hub_put(hub, m, hub->input_mailbox) == RT_EOK);
    Messages_t reply = hub ? message_hub_get_timeout(hub, hub->output_mailbox, rt_tick_from_millisecond(20000))
                           : RT_NULL;
    CHECK(reply != RT_NULL);
    if (reply)
    {
        CHECK_STR(messages_get_content_idx(reply, 0), want);
        messages_destroy(reply);
    }
}

/* The schedule's sink: counts the replies of entry `sink_id`. */
static volatile int sink_id = -1;
static volatile int sunk = 0;
static volatile int sunk_other = 0;
static void sink(int id, const char *reply)
{
    if (id == sink_id && strcmp(reply, "tock") == 0)
        sunk++;
    else
        sunk_other++;
}

int main(int argc, char **argv)
{
    if (argc != 2)
    {
        fprintf(stderr, "usage: %s MODEL_URL\n", argv[0]);
        return 2;
    }
    rt_size_t baseline = heap_used();

    /* Profiles: refused without a valid name or a system prompt. */
    agent_profile_t p = {"calc", "adds", "You add.", RT_NULL, RT_NULL, RT_NULL, "add"};
    agent_profile_t no_name = p;
    no_name.name = "not a name";
    agent_profile_t no_prompt = p;
    no_prompt.system_prompt = "";
    CHECK(agent_profile_add(RT_NULL) != RT_EOK);
    CHECK(agent_profile_add(&no_name) == -RT_EINVAL);
    CHECK(agent_profile_add(&no_prompt) == -RT_EINVAL);
    CHECK(agent_profile_add(&p) == RT_EOK);
    CHECK(agent_profile_del("calc") == RT_EOK);
    CHECK(agent_profile_del("calc") == -RT_EINVAL);
    /* Options by name: NULL and "" refused; set and cleared. */
    agent_tool_options_t slow = {1000, 2, 0, {0, 0}};
    CHECK(agent_tool_set_options(RT_NULL, &slow) == -RT_EINVAL);
    CHECK(agent_tool_set_options("", &slow) == -RT_EINVAL);
    CHECK(agent_tool_set_options("m1_far", &slow) == RT_EOK);
    CHECK(agent_tool_set_options("m1_far", RT_NULL) == RT_EOK);
    /* No tool runs: no deadline. */
    CHECK(agent_tool_deadline_ms() == -1);
    CHECK(heap_used() == baseline);

    agent_config_set("sk-test", "scripted", argv[1]);
    CHECK(main_loop_entry() == 0);
    /* This test reads the output mailbox itself: the console chat stops. */
    agent_cli_stop();
    static const agent_tool_options_t direct = {0, 0, 1, {0, 0}};
    static const agent_tool_options_t within = {300, 0, 0, {0, 0}};
    register_tool("board_state", board_state, &direct);
    register_tool("timed", timed, &within);
    MessageHub_t hub = agent_get_message_hub();
    CHECK(hub != RT_NULL);

    ask(hub, "state?", "LED on, 23.5 C");
    ask(hub, "timed?", "Result: deadline ok");

    /* A prompt every second: its replies reach the sink. */
    agent_schedule_set_sink(sink);
    CHECK(agent_schedule_add("every 9x", "tick?") == -RT_EINVAL);
    CHECK(agent_schedule_add("every 1s", "") == -RT_EINVAL);
    int id = agent_schedule_add("every 1s", "tick?");
    CHECK(id > 0);
    sink_id = id;
    for (int i = 0; i < 500 && sunk < 2; i++)
        rt_thread_mdelay(10);
    CHECK(sunk >= 2);
    CHECK(sunk_other == 0);
    CHECK(agent_schedule_del(id) == RT_EOK);
    CHECK(agent_schedule_del(id) == -RT_EINVAL);
    rt_thread_mdelay(300);
    int after_del = sunk;
    rt_thread_mdelay(2200);
    CHECK(sunk == after_del);
    agent_schedule_set_sink(RT_NULL);

    CHECK(cleanup_agent_entry() == 0);
    CHECK(heap_used() == baseline);
    return CHECK_DONE();
}
