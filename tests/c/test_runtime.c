/*
 * AgentRuntime.h from C, as a module that injects messages uses it: the hub
 * and the state before, during and after a turn of the real agent loop,
 * against the scripted model at argv[1] (one tool call, then the answer);
 * and utils.h's agent_inject_text, as the C package's MQTT toolset uses
 * it: refused without a running loop, queued behind a turn in progress.
 */
#include <rtthread.h>
#include <rt_host.h>
#include "AgentLoop.h"
#include "AgentConfig.h"
#include "AgentRuntime.h"
#include "MessageHub.h"
#include "tool_base.h"
#include "utils.h"
#include "CLI.h"
#include "check.h"

static volatile rt_bool_t busy_in_tool = RT_FALSE;
static volatile rt_bool_t running_in_tool = RT_FALSE;
static MessageHub_t volatile hub_in_tool = RT_NULL;

/* The tool the scripted model calls: records what a tool sees. */
static void probe(cJSON *args, AgentToolNode_t node)
{
    (void)args;
    busy_in_tool = agent_is_busy();
    running_in_tool = agent_is_running();
    hub_in_tool = agent_get_message_hub();
    if (node->ret.messages)
        messages_destroy(node->ret.messages);
    node->ret.messages = messages_create(1);
    node->ret.ret = node->ret.messages && messages_append(node->ret.messages, TYPE_TEXT, "probed") == RT_EOK
                        ? RT_EOK
                        : RT_ERROR;
}

/* Poll agent_is_busy() for up to 5 s; whether it read `want`. */
static int busy_becomes(rt_bool_t want)
{
    for (int i = 0; i < 500; i++)
    {
        if (agent_is_busy() == want)
            return 1;
        rt_thread_mdelay(10);
    }
    return 0;
}

/* Put a one-item text message on the hub's input mailbox. */
static void put_text(MessageHub_t hub, const char *text)
{
    Messages_t m = messages_create(1);
    CHECK(m && messages_append(m, TYPE_TEXT, text) == RT_EOK);
    CHECK(hub && message_hub_put(hub, m, hub->input_mailbox) == RT_EOK);
}

/* The next reply on the output mailbox (20 s at most) says `want`. */
static void expect_reply(MessageHub_t hub, const char *want)
{
    Messages_t reply = hub ? message_hub_get_timeout(hub, hub->output_mailbox, rt_tick_from_millisecond(20000))
                           : RT_NULL;
    CHECK(reply != RT_NULL);
    if (reply)
    {
        CHECK_STR(messages_get_content_idx(reply, 0), want);
        messages_destroy(reply);
    }
}

static void register_probe(void)
{
    cJSON *params = create_param_obj(cJSON_CreateObject(), cJSON_CreateArray());
    cJSON *item = create_tool_item("probe", "Reports the agent's state.", params);
    CHECK(item != RT_NULL);
    CHECK(append_tool(item, probe) == RT_EOK);
}

int main(int argc, char **argv)
{
    if (argc != 2)
    {
        fprintf(stderr, "usage: %s MODEL_URL\n", argv[0]);
        return 2;
    }
    rt_size_t baseline = heap_used();

    /* No agent: nothing to inject into; the text is refused, as the header
     * says (RT_ERROR, positive), and nothing is kept. */
    CHECK(agent_get_message_hub() == RT_NULL);
    CHECK(agent_is_running() == RT_FALSE);
    CHECK(agent_is_busy() == RT_FALSE);
    CHECK(agent_inject_text("anyone there?") == RT_ERROR);
    CHECK(heap_used() == baseline);

    /* An agent made by init_agent alone has no loop to read its hub. */
    init_agent();
    CHECK(agent_get_message_hub() == RT_NULL);
    CHECK(agent_is_running() == RT_FALSE);
    CHECK(agent_inject_text("anyone there?") == RT_ERROR);
    cleanup_agent();

    agent_config_set("sk-test", "scripted", argv[1]);
    CHECK(main_loop_entry() == 0);
    /* The board's channel is the CLI (the host's menuconfig choice), and a
     * channel shows the replies to messages it did not send (an injected
     * message's, AgentRuntime.h). This test reads the output mailbox
     * itself, so it stops the console chat first: it is the one reader. */
    agent_cli_stop();
    /* From this thread while the loop owns the registry: queued, and
     * registered at once, since the loop waits for a message. */
    register_probe();
    MessageHub_t hub = agent_get_message_hub();
    CHECK(hub != RT_NULL);
    CHECK(agent_is_running() == RT_TRUE);
    CHECK(agent_is_busy() == RT_FALSE);

    /* Inject a user message the way an MQTT module would. */
    put_text(hub, "what is your state?");

    /* The model answers after a delay: the turn is visible from here. */
    CHECK(busy_becomes(RT_TRUE));
    /* A second message, injected behind the turn, keeps the agent busy
     * until it is answered too: no moment in between reads idle. NULL and
     * empty texts are refused. */
    CHECK(agent_inject_text(RT_NULL) == RT_ERROR);
    CHECK(agent_inject_text("") == RT_ERROR);
    CHECK(agent_inject_text("and again?") == RT_EOK);

    expect_reply(hub, "state checked");
    CHECK(agent_is_busy() == RT_TRUE);
    expect_reply(hub, "again");
    /* Inside the tool, the turn was in progress and the hub the same. */
    CHECK(busy_in_tool == RT_TRUE);
    CHECK(running_in_tool == RT_TRUE);
    CHECK(hub_in_tool == hub);
    /* The reply is out: the loop waits again. */
    CHECK(busy_becomes(RT_FALSE));

    CHECK(cleanup_agent_entry() == 0);
    CHECK(agent_get_message_hub() == RT_NULL);
    CHECK(agent_is_running() == RT_FALSE);
    CHECK(agent_is_busy() == RT_FALSE);
    CHECK(agent_inject_text("after the end") == RT_ERROR);
    CHECK(heap_used() == baseline);
    return CHECK_DONE();
}
