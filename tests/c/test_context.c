/*
 * context.h: messages in OpenAI's shape, the assistant tool_calls message
 * with its reasoning_content, and trimming that never orphans a tool result.
 */
#include <rtthread.h>
#include <rt_host.h>
#include "context.h"
#include "check.h"

static Messages_t text(const char *s)
{
    Messages_t m = messages_create(1);
    messages_append(m, TYPE_TEXT, s);
    return m;
}

static const char *role_at(Context_t ctx, int i)
{
    cJSON *msg = cJSON_GetArrayItem(ctx->message, i);
    cJSON *role = cJSON_GetObjectItemCaseSensitive(msg, "role");
    return cJSON_IsString(role) ? role->valuestring : "(none)";
}

static char *printed(cJSON *item)
{
    static char buf[2048];
    char *p = cJSON_PrintUnformatted(item);
    snprintf(buf, sizeof(buf), "%s", p ? p : "(null)");
    cJSON_free(p);
    return buf;
}

/* A response as chat() returns it (fields on the RT-Thread heap). */
static ChatResponse_t response(const char *reasoning, const char *content, const char *calls_json)
{
    ChatResponse_t r = rt_malloc(sizeof(ChatResponse));
    r->reasoning = rt_strdup(reasoning);
    r->context = rt_strdup(content);
    r->tool_call = cJSON_Parse(calls_json);
    return r;
}

static void one_tool_round(Context_t ctx, int round)
{
    char q[32];
    rt_snprintf(q, sizeof(q), "question %d", round);
    Messages_t u = text(q);
    CHECK(ctx->append_user_message(ctx, u) == RT_EOK);
    messages_destroy(u);
    ChatResponse_t r = response("thinking", "",
        "[{\"id\":\"call_a\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}},"
        " {\"id\":\"call_b\",\"index\":1,\"type\":\"function\",\"function\":{\"name\":\"mul\",\"arguments\":\"{}\"}}]");
    CHECK(ctx->append_assistant_message(ctx, r) == RT_EOK);
    chat_response_free(r);
    Messages_t t = text("2");
    CHECK(ctx->append_tool_message(ctx, "call_a", t) == RT_EOK);
    CHECK(ctx->append_tool_message(ctx, "call_b", t) == RT_EOK);
    messages_destroy(t);
    r = response("", "the answer", "[]");
    CHECK(ctx->append_assistant_message(ctx, r) == RT_EOK);
    chat_response_free(r);
}

int main(void)
{
    rt_size_t before = heap_used();
    Context_t ctx = agent_context_create();
    CHECK(ctx && cJSON_GetArraySize(ctx->message) == 1);
    CHECK_STR(role_at(ctx, 0), "system");
    CHECK(ctx->build_system_prompt(ctx) == RT_EOK); /* no second prompt */
    CHECK(cJSON_GetArraySize(ctx->message) == 1);

    one_tool_round(ctx, 1);
    CHECK(cJSON_GetArraySize(ctx->message) == 6);
    CHECK_STR(printed(cJSON_GetArrayItem(ctx->message, 1)), "{\"role\":\"user\",\"content\":\"question 1\"}");
    /* The assistant tool_calls message comes before the results, with only
     * the fields a request carries, and keeps the reasoning. */
    CHECK_STR(printed(cJSON_GetArrayItem(ctx->message, 2)),
              "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":["
              "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}},"
              "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"mul\",\"arguments\":\"{}\"}}],"
              "\"reasoning_content\":\"thinking\"}");
    CHECK_STR(printed(cJSON_GetArrayItem(ctx->message, 3)), "{\"role\":\"tool\",\"tool_call_id\":\"call_a\",\"content\":\"2\"}");
    CHECK_STR(printed(cJSON_GetArrayItem(ctx->message, 5)), "{\"role\":\"assistant\",\"content\":\"the answer\"}");

    /* Trimming: keep 3 would start at a tool result; the cut moves on. */
    for (int round = 2; round <= 6; round++)
        one_tool_round(ctx, round);
    for (int keep = 0; keep <= 12; keep++)
    {
        Context_t c2 = agent_context_create();
        cJSON_Delete(c2->message);
        c2->message = cJSON_Duplicate(ctx->message, 1);
        CHECK(c2->trim_context(c2, keep) == RT_EOK);
        int n = cJSON_GetArraySize(c2->message);
        CHECK(n - 1 <= keep);
        CHECK_STR(role_at(c2, 0), "system");
        if (n > 1)
            CHECK(strcmp(role_at(c2, 1), "tool") != 0);
        /* every tool message still follows an assistant message with tool_calls */
        for (int i = 1; i < n; i++)
            if (strcmp(role_at(c2, i), "tool") == 0)
                CHECK(strcmp(role_at(c2, i - 1), "tool") == 0 || strcmp(role_at(c2, i - 1), "assistant") == 0);
        agent_context_destroy(c2);
    }

    /* Argument checks */
    CHECK(ctx->append_user_message(ctx, RT_NULL) != RT_EOK);
    CHECK(ctx->append_tool_message(ctx, RT_NULL, RT_NULL) != RT_EOK);
    CHECK(ctx->append_assistant_message(ctx, RT_NULL) != RT_EOK);
    CHECK(ctx->trim_context(RT_NULL, 3) != RT_EOK);

    CHECK(ctx->clear_message(ctx) == RT_EOK);
    CHECK(cJSON_GetArraySize(ctx->message) == 0);
    CHECK(ctx->build_system_prompt(ctx) == RT_EOK);
    CHECK_STR(role_at(ctx, 0), "system");
    agent_context_destroy(ctx);
    agent_context_destroy(RT_NULL);
    chat_response_free(RT_NULL);
    CHECK(heap_used() == before);

    /* Creation under memory pressure fails cleanly. */
    for (long n = 0; n < 10; n++)
    {
        rt_host_heap_fail_after(n);
        Context_t c = agent_context_create();
        rt_host_heap_fail_after(-1);
        agent_context_destroy(c);
        CHECK(heap_used() == before);
    }
    return CHECK_DONE();
}
