/*
 * Logging bridge: Rust formats a complete line and hands it here; the format
 * is always "%s", so nothing in the text is interpreted by printf.
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#ifndef RT_CONSOLEBUF_SIZE
#define RT_CONSOLEBUF_SIZE 128
#endif
#ifndef RT_NAME_MAX
#define RT_NAME_MAX 8
#endif
/* Every kernel object the library makes has a name of at most 7 bytes on
 * such a board (src/rtt/name.rs): smaller would cut them. */
#if RT_NAME_MAX < 8
#error "rtt-agent: RT_NAME_MAX must be at least 8 (the agent's kernel object names have up to 7 characters)"
#endif
const int agent_glue_name_max = RT_NAME_MAX;

/* rt_kprintf keeps at most RT_CONSOLEBUF_SIZE - 2 characters whole: it
 * formats into sizeof(buf) - 1 bytes, and from RT_CONSOLEBUF_SIZE - 1
 * characters on it sends the NUL in place of the last one (5.3's
 * src/kservice.c; the host port does the same). */
const int agent_glue_console_piece = RT_CONSOLEBUF_SIZE - 2;

/* Text that fits one console line: "[E/agent] " and "\n" around it, in
 * what rt_kprintf keeps whole (agent_glue_console_piece). */
#define AGENT_CONSOLE_LOG_PIECE (RT_CONSOLEBUF_SIZE - 2 - 11)

/* A line on the console: "[E/agent] " and "\n" around the text. */
static void agent_console_line(int level, const char *text)
{
    static const char letters[] = "???EW?ID";
    char letter = (level >= 0 && level < 8) ? letters[level] : 'D';
    rt_kprintf("[%c/agent] %s\n", letter, text);
}

#ifdef RT_USING_ULOG
#ifndef ULOG_LINE_BUF_SIZE
#define ULOG_LINE_BUF_SIZE 128
#endif
/* Text that fits one ulog line: ULOG_LINE_BUF_SIZE less the longest head
 * ulog writes before it (colour start 10, "MM-DD HH:MM:SS.mmm" 18, " I/" 3,
 * the tag "agent" 5, " " and the thread name RT_NAME_MAX + 1, ": " 2) and its
 * tail (colour end 4, "\r\n" 2, NUL 1): components/utilities/ulog/ulog.c,
 * ulog_head_formater and ulog_tail_formater. */
#define AGENT_ULOG_PIECE (ULOG_LINE_BUF_SIZE - (46 + RT_NAME_MAX))

#define LOG_TAG "agent"
#define LOG_LVL LOG_LVL_DBG
#include <ulog.h>

/* Is ulog running? A board without RT_USING_COMPONENTS_INIT (lm3s8962 and
 * other small BSPs) compiles ulog in but never calls ulog_init(), and ulog
 * then drops every line: an agent that fails to start would say nothing.
 * ulog_init() registers its output mutex, named "ulog" (ulog.c), which is
 * the one trace it leaves that a caller may look up. Once seen, kept. */
static int agent_ulog_running(void)
{
#ifdef RT_USING_MUTEX
    static volatile int seen;
    if (!seen && rt_object_find("ulog", RT_Object_Class_Mutex) != RT_NULL)
        seen = 1;
    return seen;
#else
    return 1;
#endif
}

int agent_glue_log_piece(void)
{
    return agent_ulog_running() ? AGENT_ULOG_PIECE : AGENT_CONSOLE_LOG_PIECE;
}

void agent_glue_log(int level, const char *text)
{
    if (!agent_ulog_running())
    {
        /* As a board without ulog: every line on the console, in pieces
         * of a console line (agent_glue_log_piece). */
        agent_console_line(level, text);
        return;
    }
    switch (level)
    {
    case 3: LOG_E("%s", text); break;
    case 4: LOG_W("%s", text); break;
    case 6: LOG_I("%s", text); break;
    default: LOG_D("%s", text); break;
    }
}
#else
int agent_glue_log_piece(void)
{
    return AGENT_CONSOLE_LOG_PIECE;
}

void agent_glue_log(int level, const char *text)
{
    agent_console_line(level, text);
}
#endif

/* The Rust panic handler's last step (src/rtt/allocator.rs): the board's
 * assert path, whose hook (rt_assert_set_hook) may reset the board. It exists
 * only with RT_DEBUGING_ASSERT (5.x) or RT_DEBUG (4.x); without it this
 * returns and the panicking thread sleeps for ever. */
void agent_glue_panic(const char *what, int line)
{
#if defined(RT_DEBUGING_ASSERT) || defined(RT_DEBUG)
    rt_assert_handler(what, "rtt_agent", (rt_size_t)line);
#else
    (void)what;
    (void)line;
#endif
}
