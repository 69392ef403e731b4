/*
 * tool_compare.c - built-in tool "compare": how two numbers relate.
 */
#include "tool_compare.h"

void tool_compare(cJSON *args_obj, AgentToolNode_t node)
{
    if (!args_obj || !node)
    {
        if (node)
        {
            if (node->ret.messages)
            {
                messages_destroy(node->ret.messages);
                node->ret.messages = RT_NULL;
            }
            node->ret.ret = RT_ERROR;
        }
        return;
    }

    if (node->ret.messages)
    {
        messages_destroy(node->ret.messages);
        node->ret.messages = RT_NULL;
    }

    cJSON *a_item = cJSON_GetObjectItemCaseSensitive(args_obj, "a");
    cJSON *b_item = cJSON_GetObjectItemCaseSensitive(args_obj, "b");
    if (!cJSON_IsNumber(a_item) || !cJSON_IsNumber(b_item))
    {
        node->ret.ret = RT_ERROR;
        return;
    }

    double a = a_item->valuedouble;
    double b = b_item->valuedouble;
    const char *relation = (a > b) ? "is greater than" : (a < b) ? "is less than" : "is equal to";

    char a_text[32], b_text[32];
    agent_format_number(a_text, sizeof(a_text), a);
    agent_format_number(b_text, sizeof(b_text), b);

    char result[96] = {0};
    rt_snprintf(result, sizeof(result), "%s %s %s", a_text, relation, b_text);

    node->ret.messages = messages_create(1);
    if (node->ret.messages && messages_append(node->ret.messages, TYPE_TEXT, result) == RT_EOK)
    {
        node->ret.ret = RT_EOK;
    }
    else
    {
        messages_destroy(node->ret.messages);
        node->ret.messages = RT_NULL;
        node->ret.ret = RT_ERROR;
    }
}
