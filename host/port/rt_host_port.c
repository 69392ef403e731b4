/*
 * The C half of the host port: what must be written in C because it is
 * variadic (rt_kprintf, rt_snprintf, ulog_output), the klibc string and
 * memory functions, and start-up hooks that RT-Thread runs from its INIT_*
 * tables (cJSON's allocator hooks).
 */
#include <rtthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cJSON.h"

/* Provided by the Rust half (src/host/console.rs). */
void rt_host_console_write(const char *text, size_t len);

int rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
    return vsnprintf(buf, size, fmt, args);
}

int rt_snprintf(char *buf, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(buf, size, format, args);
    va_end(args);
    return n;
}

int rt_sprintf(char *buf, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsprintf(buf, format, args);
    va_end(args);
    return n;
}

/* As RT-Thread 5.3's (src/kservice.c): it formats into
 * sizeof(rt_log_buf) - 1 bytes of its RT_CONSOLEBUF_SIZE buffer, so at most
 * RT_CONSOLEBUF_SIZE - 2 characters and their NUL, then writes
 * min(length, RT_CONSOLEBUF_SIZE - 1) bytes: output of RT_CONSOLEBUF_SIZE - 1
 * characters or more loses its last one and sends the NUL in its place. */
int rt_kprintf(const char *fmt, ...)
{
    char buf[RT_CONSOLEBUF_SIZE];
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(buf, sizeof(buf) - 1, fmt, args);
    va_end(args);
    if (n < 0)
        return n;
    size_t len = (size_t)n > RT_CONSOLEBUF_SIZE - 1 ? RT_CONSOLEBUF_SIZE - 1 : (size_t)n;
    rt_host_console_write(buf, len);
    return (int)len;
}

int rt_kputs(const char *str)
{
    if (str)
        rt_host_console_write(str, strlen(str));
    return 0;
}

/* Like ulog's: head, text and newline share one ULOG_LINE_BUF_SIZE line
 * buffer (NUL included), and what does not fit is cut
 * (components/utilities/ulog/ulog.c, ulog_formater/ulog_tail_formater). The
 * head is the short "I/tag: " of a board without time or colour output. */
void ulog_output(rt_uint32_t level, const char *tag, rt_bool_t newline, const char *format, ...)
{
    static const char letters[] = "A??EW?ID";
    char buf[ULOG_LINE_BUF_SIZE + 1];
    size_t room = ULOG_LINE_BUF_SIZE - 1 - (newline ? 1 : 0); /* the newline and NUL */
    int head = snprintf(buf, sizeof(buf), "%c/%s: ", level < 8 ? letters[level] : 'D', tag ? tag : "");
    if (head < 0 || (size_t)head >= room)
        head = 0;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(buf + head, room - (size_t)head + 1, format, args);
    va_end(args);
    size_t len = (size_t)head;
    if (n > 0)
        len += ((size_t)n < room - (size_t)head) ? (size_t)n : room - (size_t)head;
    if (newline)
        buf[len++] = '\n';
    rt_host_console_write(buf, len);
}

void rt_host_assert_failed(const char *ex, const char *func, int line)
{
    fprintf(stderr, "(%s) assertion failed at function:%s, line number:%d\n", ex, func, line);
    abort();
}

char *rt_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *p = rt_malloc(len);
    if (p)
        memcpy(p, s, len);
    return p;
}

size_t rt_strlen(const char *src) { return strlen(src); }
size_t rt_strnlen(const char *s, size_t maxlen) { return strnlen(s, maxlen); }
int rt_strcmp(const char *cs, const char *ct) { return strcmp(cs, ct); }
int rt_strncmp(const char *cs, const char *ct, size_t count) { return strncmp(cs, ct, count); }
int rt_strcasecmp(const char *a, const char *b) { return strcasecmp(a, b); }
char *rt_strncpy(char *dest, const char *src, size_t n) { return strncpy(dest, src, n); }
char *rt_strcpy(char *dest, const char *src) { return strcpy(dest, src); }
char *rt_strstr(const char *str1, const char *str2) { return strstr(str1, str2); }
void *rt_memset(void *s, int c, size_t n) { return memset(s, c, n); }
void *rt_memcpy(void *dest, const void *src, size_t n) { return memcpy(dest, src, n); }
void *rt_memmove(void *dest, const void *src, size_t n) { return memmove(dest, src, n); }
int rt_memcmp(const void *cs, const void *ct, size_t count) { return memcmp(cs, ct, count); }

/* RT-Thread's cJSON package hooks cJSON to rt_malloc/rt_free at start-up
 * (an INIT_*_EXPORT); the host port does the same before main(). */
__attribute__((constructor)) static void rt_host_cjson_hooks(void)
{
    cJSON_Hooks hooks = {rt_malloc, rt_free};
    cJSON_InitHooks(&hooks);
}
