/*
 * The C half of the host port's webclient (src/host/webclient/): only
 * webclient_header_fields_add, because it is variadic. It formats the line
 * and hands it to Rust, which appends it to the session's header buffer or
 * refuses it when header_sz would overflow.
 */
#include <rtthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <webclient.h>

/* Provided by the Rust half. */
int rt_host_webclient_header_add(struct webclient_session *session, const char *text, size_t len);

int webclient_header_fields_add(struct webclient_session *session, const char *fmt, ...)
{
    /* Most lines fit here; longer ones (a long bearer token) get a heap
     * block of their exact size, so no line is ever cut. */
    char small[256];
    va_list args, again;
    int n, rc;

    if (!session || !fmt)
        return -WEBCLIENT_ERROR;

    va_start(args, fmt);
    va_copy(again, args);
    n = vsnprintf(small, sizeof(small), fmt, args);
    va_end(args);
    if (n < 0)
    {
        va_end(again);
        return -WEBCLIENT_ERROR;
    }
    if ((size_t)n < sizeof(small))
    {
        va_end(again);
        return rt_host_webclient_header_add(session, small, (size_t)n);
    }

    char *big = rt_malloc((size_t)n + 1);
    if (!big)
    {
        va_end(again);
        return -WEBCLIENT_NOMEM;
    }
    vsnprintf(big, (size_t)n + 1, fmt, again);
    va_end(again);
    rc = rt_host_webclient_header_add(session, big, (size_t)n);
    rt_free(big);
    return rc;
}
