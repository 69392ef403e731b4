/*
 * Logging bridge: Rust formats a complete line and hands it here; the format
 * is always "%s", so nothing in the text is interpreted by printf.
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#ifdef RT_USING_ULOG
#define LOG_TAG "agent"
#define LOG_LVL LOG_LVL_DBG
#include <ulog.h>

void agent_glue_log(int level, const char *text)
{
    switch (level)
    {
    case 3: LOG_E("%s", text); break;
    case 4: LOG_W("%s", text); break;
    case 6: LOG_I("%s", text); break;
    default: LOG_D("%s", text); break;
    }
}
#else
void agent_glue_log(int level, const char *text)
{
    static const char letters[] = "???EW?ID";
    char letter = (level >= 0 && level < 8) ? letters[level] : 'D';
    rt_kprintf("[%c/agent] %s\n", letter, text);
}
#endif
