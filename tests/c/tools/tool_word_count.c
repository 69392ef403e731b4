#include "tool_word_count.h"

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void tool_word_count(cJSON *args_obj, AgentToolNode_t node)
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

    cJSON *text_item = cJSON_GetObjectItemCaseSensitive(args_obj, "text");
    if (!text_item || !cJSON_IsString(text_item) || !text_item->valuestring)
    {
        node->ret.ret = RT_ERROR;
        return;
    }

    /* A word starts wherever a non-space follows a space (or the start). */
    int count = 0;
    char previous = ' ';
    for (const char *p = text_item->valuestring; *p; p++)
    {
        if (!is_space(*p) && is_space(previous))
            count++;
        previous = *p;
    }

    char text[48] = {0};
    rt_snprintf(text, sizeof(text), "%d words", count);

    node->ret.messages = messages_create(1);
    messages_append(node->ret.messages, TYPE_TEXT, text);
    node->ret.ret = (node->ret.messages) ? RT_EOK : RT_ERROR;
}
