/*
 * tool_func.c - tool registration. This file is yours to edit: add your
 * tools at the end of init_tools(), as docs in the tool guide show
 * (properties -> required -> params -> create_tool_item -> append_tool).
 */
#include <rtthread.h>
#include "tool_func.h"

static rt_bool_t init_flag = RT_FALSE;

/* Register one tool taking two required numbers "a" and "b". */
static void register_two_number_tool(const char *name, const char *desc,
                                     const char *a_desc, const char *b_desc,
                                     void (*execute)(cJSON *param, struct AgentToolList *node))
{
    cJSON *props = cJSON_CreateObject();
    create_property(props, "a", "double", a_desc);
    create_property(props, "b", "double", b_desc);

    /* Add items only to an array that exists: cJSON_AddItemToArray(NULL, x)
     * does not free x (a NULL x is refused and leaks nothing). */
    cJSON *required = cJSON_CreateArray();
    if (required)
    {
        cJSON_AddItemToArray(required, cJSON_CreateString("a"));
        cJSON_AddItemToArray(required, cJSON_CreateString("b"));
    }

    /* Out of memory: register nothing rather than a tool missing part of its
     * schema (cJSON_Delete accepts NULL). */
    if (!props || !required || cJSON_GetArraySize(props) != 2 || cJSON_GetArraySize(required) != 2)
    {
        cJSON_Delete(props);
        cJSON_Delete(required);
        rt_kprintf("[agent] tool %s not registered: out of memory\n", name);
        return;
    }

    /* From here each builder owns what it is given, even when it fails (and
     * append_tool refuses a NULL definition). */
    cJSON *params = create_param_obj(props, required);
    cJSON *func = params ? create_tool_item(name, desc, params) : RT_NULL;
    if (append_tool(func, execute) != RT_EOK)
        rt_kprintf("[agent] tool %s not registered (out of memory, or a duplicate name)\n", name);
}

/*
 * @brief Register every tool (idempotent). Called by init_agent(); also an
 *        MSH command.
 */
void init_tools()
{
    if (init_flag)
        return;
    if (agent_tool_list_create() != RT_EOK)
        return;

    /* ========== add ========== */
    register_two_number_tool("add", "Calculate the sum of two numbers a + b",
                             "First number", "Second number", tool_add);

    /* ========== mul ========== */
    register_two_number_tool("mul", "Calculate the product of two numbers a * b",
                             "First number", "Second number", tool_mul);

    /* ========== compare ========== */
    register_two_number_tool("compare", "Compare two numbers: tells whether a is greater than, less than or equal to b",
                             "First number", "Second number", tool_compare);

    /* ========== your tools go here ========== */

    /* Build the tool list JSON sent to the model (tools appended after this
     * still join it). */
    build_tools_json();
    init_flag = RT_TRUE;
}

/*
 * @brief Free every registered tool and reset the flag; called by
 *        cleanup_agent(). The next init_tools() registers them again.
 */
void agent_tools_cleanup(void)
{
    agent_tool_list_destroy();
    init_flag = RT_FALSE;
}

MSH_CMD_EXPORT(init_tools, register the agent tools);
