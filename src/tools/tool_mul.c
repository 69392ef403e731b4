/*
 * tool_mul.c - built-in tool "mul": the product of two numbers.
 */
#include "tool_mul.h"

void tool_mul(cJSON *args_obj, AgentToolNode_t node)
{
    /* No arguments or no node: drop any old result and report failure. */
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

    /* The node is reused for every call: forget the previous result. */
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

    char a_text[32], b_text[32], product_text[32];
    agent_format_number(a_text, sizeof(a_text), a_item->valuedouble);
    agent_format_number(b_text, sizeof(b_text), b_item->valuedouble);
    agent_format_number(product_text, sizeof(product_text), a_item->valuedouble * b_item->valuedouble);

    char result[112] = {0};
    rt_snprintf(result, sizeof(result), "%s * %s = %s", a_text, b_text, product_text);

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
