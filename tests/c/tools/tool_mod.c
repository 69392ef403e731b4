#include "tool_mod.h"

void tool_mod(cJSON *args_obj, AgentToolNode_t node)
{
    /* 1. nothing to work with: clear any old result, report failure */
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

    /* 2. the node is reused between calls: drop the last result first */
    if (node->ret.messages)
    {
        messages_destroy(node->ret.messages);
        node->ret.messages = RT_NULL;
    }

    /* 3. both operands must be present and numeric */
    cJSON *dividend = cJSON_GetObjectItemCaseSensitive(args_obj, "a");
    cJSON *divisor = cJSON_GetObjectItemCaseSensitive(args_obj, "b");
    if (!dividend || !divisor || !cJSON_IsNumber(dividend) || !cJSON_IsNumber(divisor))
    {
        node->ret.ret = RT_ERROR;
        return;
    }

    /* 4. compute; a zero divisor is reported to the model as text */
    long long a = (long long)dividend->valuedouble;
    long long b = (long long)divisor->valuedouble;
    char text[80] = {0};
    if (b == 0)
        rt_snprintf(text, sizeof(text), "cannot take %lld modulo 0", a);
    else
        rt_snprintf(text, sizeof(text), "%lld mod %lld = %lld", a, b, a % b);

    /* 5. hand the text back as the tool's result */
    node->ret.messages = messages_create(1);
    messages_append(node->ret.messages, TYPE_TEXT, text);
    node->ret.ret = (node->ret.messages) ? RT_EOK : RT_ERROR;
}
