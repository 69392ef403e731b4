/* check.h: the smallest test harness for the C tests. Each CHECK counts a
 * pass or prints the failing expression; CHECK_DONE prints the plain
 * "N passed, M failed" line and gives main's exit status. */
#ifndef RTT_AGENT_CHECK_H
#define RTT_AGENT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond)                                                              \
            check_passed++;                                                    \
        else {                                                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                      \
    } while (0)

#define CHECK_STR(actual, expected)                                            \
    do {                                                                       \
        const char *a_ = (actual), *e_ = (expected);                           \
        if (a_ && e_ && strcmp(a_, e_) == 0)                                   \
            check_passed++;                                                    \
        else {                                                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK_STR failed: got \"%s\", want \"%s\"\n", \
                    __FILE__, __LINE__, a_ ? a_ : "(null)", e_ ? e_ : "(null)"); \
        }                                                                      \
    } while (0)

#define CHECK_DONE()                                                           \
    (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed ? 1 : 0)

/* Heap in use now (the host port's accounting heap). */
static inline rt_size_t heap_used(void)
{
    rt_size_t total, used, max_used;
    rt_memory_info(&total, &used, &max_used);
    return used;
}

#endif
