/* agent_format_number (src/tools/number_format.c), the built-in tools'
 * number text, through the rt_snprintf it is linked with.
 *
 * Built two ways (tests/c_tests.rs):
 * - against the host port's rt_snprintf (the C library's formats);
 * - with TINY_VSNPRINTF: against RT-Thread's own default formatter,
 *   src/klibc/rt_vsnprintf_tiny.c from RTT_ROOT, compiled beside this file
 *   as tiny_rt_vsnprintf (with and without
 *   RT_KLIBC_USING_VSNPRINTF_LONGLONG), and number_format.c compiled again
 *   to call it. The answers must be the same. */
#include <rtthread.h>
#include <stdarg.h>
#include <stdio.h>
#include "utils.h"
#include "check.h"

#ifdef TINY_VSNPRINTF
int tiny_rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list args);

int tiny_rt_snprintf(char *buf, rt_size_t size, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = tiny_rt_vsnprintf(buf, size, fmt, args);
    va_end(args);
    return n;
}

int tiny_agent_format_number(char *buf, size_t size, double v);
#define FORMAT tiny_agent_format_number
#else
#define FORMAT agent_format_number
#endif

static const struct
{
    double value;
    const char *text;
} cases[] = {
    {0.0, "0"},
    {-0.0, "0"},
    {5.0, "5"},
    {-5.0, "-5"},
    {20.0, "20"},
    {2.5, "2.5"},
    {-2.5, "-2.5"},
    {0.1, "0.1"},
    {0.000001, "0.000001"},
    {0.0000004, "0"},
    {-0.0000004, "0"},
    {1.0000005, "1.000001"},
    {123456.789, "123456.789"},
    {4294967296.0, "4294967296"},
    {9999999999999.5, "9999999999999.5"},
    {1e13, "10000000000000"},
    {12345678901234.6, "12345678901234.6"},
    {0.1 + 0.2, "0.3"},
    {1.0 / 3.0, "0.333333"},
    {2.0 / 3.0, "0.666667"},
    {1e15, "1000000000000000"},
    {8999999999999999.0, "8999999999999999"},
    {1e16, "inf-or-too-large"},
    {-1e16, "-inf-or-too-large"},
};

int main(void)
{
    char buf[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    {
        int n = FORMAT(buf, sizeof(buf), cases[i].value);
        CHECK_STR(buf, cases[i].text);
        CHECK(n == (int)strlen(cases[i].text));
    }
    /* NaN, and a buffer too short: cut, NUL-terminated. */
    volatile double zero = 0.0;
    FORMAT(buf, sizeof(buf), zero / zero);
    CHECK_STR(buf, "nan");
    char small[4];
    FORMAT(small, sizeof(small), 123456.0);
    CHECK_STR(small, "123");
    CHECK(FORMAT(NULL, 8, 1.0) == 0);
    CHECK(FORMAT(buf, 0, 1.0) == 0);
#ifdef TINY_VSNPRINTF
    /* The control: the formatter under test is RT-Thread's tiny one, which
     * (without RT_KLIBC_USING_VSNPRINTF_LONGLONG) prints "%lu" for %llu,
     * the answer the old agent_format_number gave on such boards. */
    tiny_rt_snprintf(buf, sizeof(buf), "%llu", 5ULL);
#ifdef RT_KLIBC_USING_VSNPRINTF_LONGLONG
    CHECK_STR(buf, "5");
#else
    CHECK_STR(buf, "%lu");
#endif
#endif
    return CHECK_DONE();
}
