/*
 * tool_board_mem.c - the load run's "board_mem" tool (tests/qemu/soak.py,
 * `tests/qemu/run.sh --soak MINUTES`). Not part of the package: the run
 * copies this file into the work dir's copy of the package
 * (src/tools/soak/, which the package's SConscript compiles) and adds one
 * call of soak_tools_register() to that copy's tool_func.c.
 *
 * board_mem({"tag": N}) answers, in one line of JSON,
 *   {"tag":N,"seq":S,"busy":B,"total":T,"used":U,"max":M,"stacks":{"name":[used,size],...}}
 * - total, used, max: rt_memory_info() (the system heap: what `free` shows);
 * - seq: calls since boot (this tool's own counter);
 * - busy: agent_is_busy() as the call ran (1: the loop was answering a
 *   message or one waited; an MCP call runs on the MCP server's thread);
 * - stacks: the stack high-water of the library's threads (names starting
 *   "Ag": AgentLoop, AgentCLI, AgentMcp, AgentSched, ...) and of lwIP's
 *   tcpip, WebNet's webnet and the shell's tshell, measured as the
 *   kernel's `list thread` does (components/finsh/cmd.c): a thread's stack
 *   is filled with '#' when it is made, and the bytes from the far end of
 *   the stack that are no longer '#' are the most it has used.
 * The tag comes back unchanged, so each answer names the call it belongs to.
 */
#include <rtthread.h>
#include "tool_func.h"
#include "AgentRuntime.h"

/* The JSON answer's bound (a dozen threads fit). */
#define BOARD_MEM_TEXT 640

static rt_uint32_t board_mem_calls;

static int stack_wanted(const char *name)
{
    return rt_strncmp(name, "Ag", 2) == 0 || rt_strcmp(name, "tcpip") == 0 ||
           rt_strcmp(name, "webnet") == 0 || rt_strcmp(name, "tshell") == 0;
}

/* The most of `t`'s stack ever used (bytes), as list_thread computes it. */
static rt_uint32_t stack_used(struct rt_thread *t)
{
    rt_uint8_t *base = (rt_uint8_t *)t->stack_addr;
    rt_uint32_t size = t->stack_size;
#if defined(ARCH_CPU_STACK_GROWS_UPWARD)
    rt_uint8_t *p = base + size - 1;
    while (p > base && *p == '#')
        p--;
    return (rt_uint32_t)(p - base);
#else
    rt_uint8_t *p = base;
    while (p < base + size && *p == '#')
        p++;
    return size - (rt_uint32_t)(p - base);
#endif
}

/* Appends the "stacks" object to out (len bytes used of size). */
static int append_stacks(char *out, int len, int size)
{
    struct rt_object_information *info = rt_object_get_information(RT_Object_Class_Thread);
    rt_list_t *node;
    int first = 1;

    if (!info)
        return len;
    len += rt_snprintf(out + len, size - len, ",\"stacks\":{");
    /* The scheduler locked: no thread can end (and its stack be freed)
     * while its bytes are read. */
    rt_enter_critical();
    for (node = info->object_list.next; node != &info->object_list; node = node->next)
    {
        struct rt_object *obj = rt_list_entry(node, struct rt_object, list);
        struct rt_thread *t = (struct rt_thread *)obj;
        char name[RT_NAME_MAX + 1];

        rt_memcpy(name, obj->name, RT_NAME_MAX);
        name[RT_NAME_MAX] = '\0';
        if (!stack_wanted(name) || len >= size - 48)
            continue;
        len += rt_snprintf(out + len, size - len, "%s\"%s\":[%d,%d]", first ? "" : ",", name,
                           (int)stack_used(t), (int)t->stack_size);
        first = 0;
    }
    rt_exit_critical();
    if (len < size - 2)
        len += rt_snprintf(out + len, size - len, "}");
    return len;
}

static void tool_board_mem(cJSON *args_obj, AgentToolNode_t node)
{
    rt_size_t total = 0, used = 0, max_used = 0;
    cJSON *tag;
    char *text;
    int len;

    if (!node)
        return;
    /* The node is reused for every call: forget the previous result. */
    if (node->ret.messages)
    {
        messages_destroy(node->ret.messages);
        node->ret.messages = RT_NULL;
    }
    node->ret.ret = RT_ERROR;
    /* Read before this call allocates anything. */
    rt_memory_info(&total, &used, &max_used);
    board_mem_calls++;
    tag = args_obj ? cJSON_GetObjectItemCaseSensitive(args_obj, "tag") : RT_NULL;
    /* On the heap, not the calling thread's stack (the loop's is small on
     * a small board). */
    text = (char *)rt_malloc(BOARD_MEM_TEXT);
    if (!text)
        return;
    len = rt_snprintf(text, BOARD_MEM_TEXT,
                      "{\"tag\":%d,\"seq\":%d,\"busy\":%d,\"total\":%d,\"used\":%d,\"max\":%d",
                      cJSON_IsNumber(tag) ? (int)tag->valuedouble : -1, (int)board_mem_calls,
                      agent_is_busy() ? 1 : 0, (int)total, (int)used, (int)max_used);
    len = append_stacks(text, len, BOARD_MEM_TEXT);
    if (len < BOARD_MEM_TEXT - 1)
        rt_snprintf(text + len, BOARD_MEM_TEXT - len, "}");
    node->ret.messages = messages_create(1);
    if (node->ret.messages && messages_append(node->ret.messages, TYPE_TEXT, text) == RT_EOK)
    {
        node->ret.ret = RT_EOK;
    }
    else
    {
        messages_destroy(node->ret.messages);
        node->ret.messages = RT_NULL;
    }
    rt_free(text);
}

#if defined(RT_USING_DFS) && defined(DFS_USING_POSIX) && defined(RT_USING_FINSH)
#include <dfs.h>
/*
 * soak_fds: the slots of DFS's table of descriptors (files and, with SAL's
 * POSIX sockets, sockets). DFS grows it, 4 slots at a time, when more
 * descriptors are open at once than it holds, and keeps it for good: the
 * load run compares the heap after its final cleanup with the baseline
 * knowing how much of a difference that table explains.
 */
static int soak_fds(void)
{
    struct dfs_fdtable *t = dfs_fdtable_get();
    rt_kprintf("soak: descriptor table of %d slots\n", t ? (int)t->maxfd : -1);
    return 0;
}
MSH_CMD_EXPORT(soak_fds, the load run: DFS descriptor table slots);
#endif

#if defined(RT_USING_SAL) && defined(SAL_USING_POSIX) && defined(RT_USING_FINSH)
#include <sys/socket.h>
#define SOAK_GROW_MAX 16
/*
 * soak_grow: open as many sockets at once as lwIP gives (TCP first, then
 * UDP, at most SOAK_GROW_MAX), then close them all. Each socket takes a
 * slot of SAL's socket table and one of DFS's descriptor table, which grow
 * 4 slots at a time and are kept for good; lwIP's pools bound how many
 * sockets can be open at once, so after this the load cannot grow them
 * any more (the load run calls it before it takes its heap baseline).
 */
static int soak_grow(void)
{
    int fds[SOAK_GROW_MAX];
    int n = 0, tcp = 0, i;

    while (n < SOAK_GROW_MAX)
    {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0)
            break;
        fds[n++] = s;
        tcp++;
    }
    while (n < SOAK_GROW_MAX)
    {
        int s = socket(AF_INET, SOCK_DGRAM, 0);
        if (s < 0)
            break;
        fds[n++] = s;
    }
    for (i = 0; i < n; i++)
        closesocket(fds[i]);
    rt_kprintf("soak: %d sockets open at once (%d TCP), closed\n", n, tcp);
    return 0;
}
MSH_CMD_EXPORT(soak_grow, the load run: grow the kernel socket and descriptor tables to their bound);
#endif

#if defined(RT_USING_FINSH)
#include <stdlib.h>
/*
 * soak_uptime SECONDS: move the kernel's tick forward by that many seconds,
 * so the run that follows is that of a board up for that long (timers
 * already waiting fire at once). The lm3s BSP once never started its
 * soft-timer thread: the SysTick then released a never-made semaphore
 * once the tick passed a value its flash happened to hold (18 min 35 s in
 * the load run's firmware), a kernel assertion no short run reaches. The
 * load run jumps past any such value at the start instead.
 */
static int soak_uptime(int argc, char **argv)
{
    long seconds = argc > 1 ? strtol(argv[1], RT_NULL, 10) : 0;

    if (seconds <= 0 || seconds > 7 * 24 * 3600L)
    {
        rt_kprintf("usage: soak_uptime SECONDS (1 to a week)\n");
        return -1;
    }
    rt_tick_set(rt_tick_get() + (rt_tick_t)seconds * RT_TICK_PER_SECOND);
    rt_kprintf("soak: the tick moved forward to %u\n", (unsigned)rt_tick_get());
    return 0;
}
MSH_CMD_EXPORT(soak_uptime, the load run: move the tick forward SECONDS (a board up for long));
#endif

/* Called from init_tools() of the work dir's copy of tool_func.c. */
void soak_tools_register(void)
{
    cJSON *props = cJSON_CreateObject();
    cJSON *required = cJSON_CreateArray();
    cJSON *params, *func;

    if (props)
        create_property(props, "tag", "int", "A number the answer repeats, naming the call");
    if (required)
        cJSON_AddItemToArray(required, cJSON_CreateString("tag"));
    if (!props || !required || cJSON_GetArraySize(props) != 1 || cJSON_GetArraySize(required) != 1)
    {
        cJSON_Delete(props);
        cJSON_Delete(required);
        rt_kprintf("[soak] tool board_mem not registered: out of memory\n");
        return;
    }
    params = create_param_obj(props, required);
    func = params ? create_tool_item("board_mem",
                                     "The board's heap (total, used, max used) and its threads' stack high-water",
                                     params)
                  : RT_NULL;
    if (append_tool(func, tool_board_mem) != RT_EOK)
        rt_kprintf("[soak] tool board_mem not registered\n");
}
