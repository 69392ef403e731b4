/*
 * The console's receive indicator, read for the CLI channel: struct
 * rt_device's layout depends on the board's options (RT_USING_DEVICE_OPS,
 * the object header), so the member is read here, with the board's headers.
 */
#include <rtthread.h>
#include "agent_glue.h"

agent_rx_indicate_t agent_glue_rx_indicate(rt_device_t dev)
{
    return dev ? dev->rx_indicate : RT_NULL;
}

#if defined(RT_USING_FINSH) && !defined(RT_USING_POSIX_STDIO) && defined(RT_USING_DEVICE)
#include <shell.h>
/* shell.c's own (not static): the shell, once finsh_system_init has run. */
extern struct finsh_shell *shell;
#define AGENT_SHELL_HAS_DEVICE 1
#endif

/* The console the CLI channel takes over: the device the shell reads,
 * else the kernel's console, else RT_CONSOLE_DEVICE_NAME. The name in
 * rtconfig.h is not always the console's: lm3s8962's startup.c reads the
 * shell from "uart1" (finsh_set_device) while rtconfig.h says "uart", and
 * sets no kernel console device at all. */
rt_device_t agent_glue_console(void)
{
#ifdef AGENT_SHELL_HAS_DEVICE
    if (shell != RT_NULL && shell->device != RT_NULL)
        return shell->device;
#endif
#if defined(RT_USING_DEVICE) && defined(RT_USING_CONSOLE)
    {
        rt_device_t dev = rt_console_get_device();
        if (dev != RT_NULL)
            return dev;
    }
#endif
#ifdef RT_CONSOLE_DEVICE_NAME
    return rt_device_find(RT_CONSOLE_DEVICE_NAME);
#else
    return RT_NULL;
#endif
}

/* How many bytes of the calling thread's stack were ever used, read as
 * `list thread` does (components/finsh/cmd.c: the kernel fills a new
 * thread's stack with '#'). The CLI channel's thread logs it as it ends,
 * since `list thread` no longer sees it then. The host port's threads are
 * the OS's: 0, unknown. */
rt_size_t agent_glue_stack_used(void)
{
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
    return 0;
#else
    rt_thread_t t = rt_thread_self();
    rt_uint8_t *base = (rt_uint8_t *)t->stack_addr;
    rt_size_t size = t->stack_size;
    rt_size_t unused = 0;
#if defined(ARCH_CPU_STACK_GROWS_UPWARD)
    while (unused < size && base[size - 1 - unused] == '#')
        unused++;
#else
    while (unused < size && base[unused] == '#')
        unused++;
#endif
    return size - unused;
#endif
}
