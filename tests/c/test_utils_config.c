/*
 * utils.h builders, role names, the system prompt and AgentConfig.h.
 */
#include <rtthread.h>
#include <rt_host.h>
#include "utils.h"
#include "context.h"
#include "AgentConfig.h"
#include "check.h"

static void check_json(cJSON *item, const char *expected)
{
    char *text = item ? cJSON_PrintUnformatted(item) : RT_NULL;
    CHECK_STR(text, expected);
    if (text)
        cJSON_free(text);
    cJSON_Delete(item);
}

static void builders(void)
{
    rt_size_t before = heap_used();
    check_json(format_text("hi \"you\""), "{\"text\":\"hi \\\"you\\\"\",\"type\":\"text\"}");
    CHECK(format_text(RT_NULL) == RT_NULL);
    check_json(create_content_array(), "[]");

    Messages_t m = messages_create(0);
    CHECK(to_content(m) == RT_NULL);
    messages_append(m, TYPE_TEXT, "first");
    messages_append(m, TYPE_TEXT, "second");
    check_json(to_content(m), "\"first\"");
    CHECK(to_content(RT_NULL) == RT_NULL);
    messages_destroy(m);

    cJSON *props = cJSON_CreateObject();
    create_property(props, "city", "string", "City name");
    create_property(props, "days", "integer", RT_NULL);
    create_property(RT_NULL, "x", "string", "ignored");
    create_property(props, RT_NULL, "string", "ignored");
    cJSON *required = cJSON_CreateArray();
    cJSON_AddItemToArray(required, cJSON_CreateString("city"));
    cJSON *params = create_param_obj(props, required);
    check_json(create_tool_item("weather", "Weather for a city", params),
               "{\"type\":\"function\",\"function\":{\"name\":\"weather\",\"description\":\"Weather for a city\","
               "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"City name\"},"
               "\"days\":{\"type\":\"integer\",\"description\":\"\"}},\"required\":[\"city\"]}}}");

    /* Builders own what they are given, even when they fail. */
    CHECK(create_tool_item(RT_NULL, "x", create_param_obj(cJSON_CreateObject(), cJSON_CreateArray())) == RT_NULL);
    CHECK(create_param_obj(RT_NULL, cJSON_CreateArray()) == RT_NULL);
    for (long n = 0; n < 12; n++)
    {
        cJSON *p = create_param_obj(cJSON_CreateObject(), cJSON_CreateArray());
        rt_host_heap_fail_after(n);
        cJSON *tool = create_tool_item("t", "d", p);
        rt_host_heap_fail_after(-1);
        cJSON_Delete(tool);
    }
    CHECK(heap_used() == before);
}

static void roles_and_prompt(void)
{
    CHECK_STR(get_role_string(ROLE_SYSTEM), "system");
    CHECK_STR(get_role_string(ROLE_USER), "user");
    CHECK_STR(get_role_string(ROLE_ASSISTANT), "assistant");
    CHECK_STR(get_role_string(ROLE_TOOL), "tool");
    CHECK(get_role_string((RoleType)42) != RT_NULL);
    CHECK(get_system_prompt() != RT_NULL && strlen(get_system_prompt()) > 20);
}

static void config(void)
{
    agent_runtime_config_t *cfg = agent_config_get();
    CHECK(cfg != RT_NULL);
    CHECK(((uintptr_t)cfg % RT_ALIGN_SIZE) == 0);
    CHECK(!cfg->is_configured);
    CHECK_STR(get_dynamic_agent_api_key(), PKG_AGENT_API_KEY);
    CHECK_STR(get_dynamic_agent_model_name(), PKG_AGENT_MODEL_NAME);
    CHECK_STR(get_dynamic_agent_api_url(), PKG_AGENT_API_URL);

    agent_config_set("sk-test", RT_NULL, RT_NULL);
    CHECK(cfg->is_configured);
    CHECK_STR(get_dynamic_agent_api_key(), "sk-test");
    CHECK_STR(cfg->api_key, "sk-test");
    CHECK_STR(get_dynamic_agent_model_name(), PKG_AGENT_MODEL_NAME);

    agent_config_set(RT_NULL, "qwen-plus", "https://example.invalid/v1/chat/completions");
    CHECK_STR(get_dynamic_agent_model_name(), "qwen-plus");
    CHECK_STR(get_dynamic_agent_api_url(), "https://example.invalid/v1/chat/completions");

    /* 127 bytes fit; 128 are refused, not truncated. */
    char long_value[200];
    memset(long_value, 'k', sizeof(long_value));
    long_value[127] = '\0';
    agent_config_set(long_value, RT_NULL, RT_NULL);
    CHECK(strlen(get_dynamic_agent_api_key()) == 127);
    long_value[127] = 'k';
    long_value[128] = '\0';
    agent_config_set(RT_NULL, long_value, RT_NULL);
    CHECK_STR(get_dynamic_agent_model_name(), "qwen-plus");
}

int main(void)
{
    builders();
    roles_and_prompt();
    config();
    return CHECK_DONE();
}
