/*
 * The tool registry with real C tools: the three built-ins registered by
 * init_tools(), plus mod and word_count written in the tool guide's style and
 * registered the guide's way after init_tools() (so they also prove that a
 * tool appended after build_tools_json() is offered to the model).
 */
#include <rtthread.h>
#include <rt_host.h>
#include "tool_func.h"
#include "tool_mod.h"
#include "tool_word_count.h"
#include "check.h"

static void register_extra_tools(void)
{
    /* ========== mod ========== */
    cJSON *props_mod = cJSON_CreateObject();
    create_property(props_mod, "a", "double", "Dividend");
    create_property(props_mod, "b", "double", "Divisor");

    cJSON *required_mod = cJSON_CreateArray();
    cJSON_AddItemToArray(required_mod, cJSON_CreateString("a"));
    cJSON_AddItemToArray(required_mod, cJSON_CreateString("b"));

    cJSON *params_mod = create_param_obj(props_mod, required_mod);
    cJSON *mod_func = create_tool_item("mod", "Remainder of a divided by b", params_mod);
    CHECK(append_tool(mod_func, tool_mod) == RT_EOK);

    /* ========== word_count ========== */
    cJSON *props_wc = cJSON_CreateObject();
    create_property(props_wc, "text", "string", "The text whose words are counted");

    cJSON *required_wc = cJSON_CreateArray();
    cJSON_AddItemToArray(required_wc, cJSON_CreateString("text"));

    cJSON *params_wc = create_param_obj(props_wc, required_wc);
    cJSON *wc_func = create_tool_item("word_count", "Count the words in a text", params_wc);
    CHECK(append_tool(wc_func, tool_word_count) == RT_EOK);
}

/* A tool call as the model sends it: {"id", "type", "function": {"name", "arguments"}}. */
static cJSON *make_call(const char *name, const char *arguments)
{
    cJSON *call = cJSON_CreateObject();
    cJSON_AddStringToObject(call, "id", "call_1");
    cJSON_AddStringToObject(call, "type", "function");
    cJSON *function = cJSON_AddObjectToObject(call, "function");
    cJSON_AddStringToObject(function, "name", name);
    cJSON_AddStringToObject(function, "arguments", arguments);
    return call;
}

/* Find the tool for a call, run it with its arguments, return the node. */
static AgentToolNode_t run_call(const char *name, const char *arguments)
{
    cJSON *call = make_call(name, arguments);
    AgentToolNode_t node = search_agent_tool_node(call);
    if (node)
    {
        cJSON *args = cJSON_Parse(arguments);
        node->execute_func(args, node);
        cJSON_Delete(args);
    }
    cJSON_Delete(call);
    return node;
}

static void expect_result(const char *name, const char *arguments, const char *expected)
{
    AgentToolNode_t node = run_call(name, arguments);
    CHECK(node != RT_NULL);
    if (!node)
        return;
    CHECK(node->ret.ret == RT_EOK);
    CHECK(node->ret.messages && node->ret.messages->current_size == 1);
    CHECK_STR(messages_get_content_idx(node->ret.messages, 0), expected);
    CHECK(messages_get_type_idx(node->ret.messages, 0) == TYPE_TEXT);
}

static void expect_failure(const char *name, const char *arguments)
{
    AgentToolNode_t node = run_call(name, arguments);
    CHECK(node != RT_NULL);
    if (!node)
        return;
    CHECK(node->ret.ret == RT_ERROR);
    CHECK(node->ret.messages == RT_NULL);
}

static const char *tool_name_at(int i)
{
    cJSON *item = cJSON_GetArrayItem(get_agent_tools(), i);
    cJSON *function = cJSON_GetObjectItemCaseSensitive(item, "function");
    cJSON *name = cJSON_GetObjectItemCaseSensitive(function, "name");
    return cJSON_IsString(name) ? name->valuestring : RT_NULL;
}

int main(void)
{
    rt_size_t baseline = heap_used();

    CHECK(get_agent_tools() == RT_NULL);
    init_tools();
    init_tools(); /* idempotent */
    CHECK(cJSON_GetArraySize(get_agent_tools()) == 3);
    register_extra_tools();

    /* All five are offered to the model, in registration order. */
    CHECK(cJSON_GetArraySize(get_agent_tools()) == 5);
    CHECK_STR(tool_name_at(0), "add");
    CHECK_STR(tool_name_at(1), "mul");
    CHECK_STR(tool_name_at(2), "compare");
    CHECK_STR(tool_name_at(3), "mod");
    CHECK_STR(tool_name_at(4), "word_count");
    CHECK(build_tools_json() == get_agent_tools()); /* built once, returned as is */

    /* The registered schema is what the guide's builders make. */
    cJSON *add_def = cJSON_GetArrayItem(get_agent_tools(), 0);
    char *printed = cJSON_PrintUnformatted(add_def);
    CHECK_STR(printed,
              "{\"type\":\"function\",\"function\":{\"name\":\"add\",\"description\":\"Calculate the sum of two numbers a + b\","
              "\"parameters\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"double\",\"description\":\"First number\"},"
              "\"b\":{\"type\":\"double\",\"description\":\"Second number\"}},\"required\":[\"a\",\"b\"]}}}");
    cJSON_free(printed);

    /* Each tool runs and answers. */
    expect_result("add", "{\"a\":2,\"b\":3}", "2 + 3 = 5");
    expect_result("add", "{\"a\":-1.25,\"b\":0.5}", "-1.25 + 0.5 = -0.75");
    expect_result("mul", "{\"a\":2.5,\"b\":4}", "2.5 * 4 = 10");
    expect_result("compare", "{\"a\":1,\"b\":2}", "1 is less than 2");
    expect_result("compare", "{\"a\":7,\"b\":7}", "7 is equal to 7");
    expect_result("compare", "{\"a\":9,\"b\":-3}", "9 is greater than -3");
    expect_result("mod", "{\"a\":17,\"b\":5}", "17 mod 5 = 2");
    expect_result("mod", "{\"a\":17,\"b\":0}", "cannot take 17 modulo 0");
    expect_result("word_count", "{\"text\":\"  hello  rt-thread\\tworld \"}", "3 words");
    expect_result("word_count", "{\"text\":\"\"}", "0 words");

    /* Missing or wrong-typed arguments: RT_ERROR and no messages. */
    expect_failure("add", "{\"a\":2}");
    expect_failure("mul", "{\"a\":\"2\",\"b\":3}");
    expect_failure("compare", "{}");
    expect_failure("mod", "{\"a\":true,\"b\":3}");
    expect_failure("word_count", "{\"text\":42}");
    AgentToolNode_t add_node = run_call("add", "{\"a\":1,\"b\":1}");
    CHECK(add_node != RT_NULL);
    add_node->execute_func(RT_NULL, add_node); /* NULL arguments */
    CHECK(add_node->ret.ret == RT_ERROR && add_node->ret.messages == RT_NULL);

    /* A node reused for a second call holds only the second result. */
    expect_result("mul", "{\"a\":3,\"b\":3}", "3 * 3 = 9");
    AgentToolNode_t mul_node = run_call("mul", "{\"a\":6,\"b\":7}");
    CHECK(mul_node && mul_node->ret.messages->current_size == 1);
    CHECK_STR(messages_get_content_idx(mul_node->ret.messages, 0), "6 * 7 = 42");
    CHECK(messages_get_content_idx(mul_node->ret.messages, 1) == RT_NULL);

    /* Lookups that find nothing. */
    cJSON *unknown = make_call("divide", "{}");
    CHECK(search_agent_tool_node(unknown) == RT_NULL);
    cJSON_Delete(unknown);
    cJSON *malformed = cJSON_Parse("{\"name\":\"add\"}");
    CHECK(search_agent_tool_node(malformed) == RT_NULL);
    cJSON_Delete(malformed);
    CHECK(search_agent_tool_node(RT_NULL) == RT_NULL);

    /* A second tool of the same name is refused (its definition is freed). */
    cJSON *dup = create_tool_item("add", "again", create_param_obj(cJSON_CreateObject(), RT_NULL));
    CHECK(append_tool(dup, tool_add) == RT_ERROR);
    CHECK(cJSON_GetArraySize(get_agent_tools()) == 5);
    /* Without a function, or with a NULL definition: refused. */
    CHECK(append_tool(create_tool_item("x", "y", RT_NULL), RT_NULL) == RT_ERROR);
    CHECK(append_tool(RT_NULL, tool_add) == RT_ERROR);

    /* Cleanup frees everything; registration works again afterwards. */
    agent_tools_cleanup();
    CHECK(get_agent_tools() == RT_NULL);
    CHECK(heap_used() == baseline);
    CHECK(append_tool(create_tool_item("late", "no list", RT_NULL), tool_add) == RT_ERROR);
    CHECK(heap_used() == baseline);
    init_tools();
    CHECK(cJSON_GetArraySize(get_agent_tools()) == 3);
    expect_result("add", "{\"a\":40,\"b\":2}", "40 + 2 = 42");
    agent_tools_cleanup();
    agent_tools_cleanup(); /* nothing left: a no-op */
    CHECK(heap_used() == baseline);

    /* init_tools is an MSH command. */
    CHECK(rt_host_msh_exec("init_tools") != -1);
    CHECK(cJSON_GetArraySize(get_agent_tools()) == 3);
    agent_tools_cleanup();
    CHECK(heap_used() == baseline);

    return CHECK_DONE();
}
