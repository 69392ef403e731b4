/*
 * Heap accounting over many cycles: creating, using and destroying the tool
 * registry and the hub 1000 times ends with `used` exactly where it began.
 */
#include <rtthread.h>
#include <rt_host.h>
#include "tool_func.h"
#include "MessageHub.h"
#include "check.h"

int main(void)
{
    rt_size_t baseline = heap_used();

    for (int i = 0; i < 1000; i++)
    {
        init_tools();
        cJSON *late = create_tool_item("late", "registered after the array was built",
                                       create_param_obj(cJSON_CreateObject(), cJSON_CreateArray()));
        append_tool(late, tool_add);
        cJSON *call = cJSON_Parse("{\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}");
        AgentToolNode_t node = search_agent_tool_node(call);
        cJSON *args = cJSON_Parse("{\"a\":1,\"b\":2}");
        node->execute_func(args, node);
        cJSON_Delete(args);
        cJSON_Delete(call);
        agent_tools_cleanup();

        MessageHub_t hub = message_hub_create();
        Messages_t in = messages_create(0);
        messages_append(in, TYPE_TEXT, "question");
        message_hub_put(hub, in, hub->input_mailbox);
        Messages_t got = message_hub_get_timeout(hub, hub->input_mailbox, RT_WAITING_NO);
        messages_destroy(got);
        Messages_t left = messages_create(2);
        messages_append(left, TYPE_TEXT, "left in the mailbox");
        message_hub_put(hub, left, hub->output_mailbox);
        message_hub_destroy(hub);

        if (heap_used() != baseline)
        {
            fprintf(stderr, "cycle %d: used %lu, baseline %lu\n", i, (unsigned long)heap_used(), (unsigned long)baseline);
            break;
        }
    }
    CHECK(heap_used() == baseline);

    rt_size_t total, used, max_used;
    rt_memory_info(&total, &used, &max_used);
    CHECK(max_used > baseline); /* the cycles did allocate */
    CHECK(total >= max_used);
    return CHECK_DONE();
}
