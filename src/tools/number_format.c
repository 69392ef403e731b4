/*
 * agent_format_number: decimal text for a double without %f. RT-Thread's
 * default rt_vsnprintf prints nothing for %f (RT_KLIBC_USING_VSNPRINTF_STANDARD
 * enables it), so tools that report numbers use this instead.
 *
 * It lives with the tools, not the glue: only tools call it, and its double
 * arithmetic (software helpers on a board without a double-precision FPU)
 * is what a tool that sums doubles pays anyway.
 */
#include <rtthread.h>
#include "utils.h"

int agent_format_number(char *buf, size_t size, double v)
{
    if (!buf || size == 0)
        return 0;
    if (v != v)
        return rt_snprintf(buf, size, "nan");
    if (v > 9.0e15 || v < -9.0e15)
        return rt_snprintf(buf, size, "%s", v > 0 ? "inf-or-too-large" : "-inf-or-too-large");

    int negative = v < 0;
    double magnitude = negative ? -v : v;
    /* Six decimals, rounded half up, then trailing zeros dropped. */
    unsigned long long scaled = (unsigned long long)(magnitude * 1000000.0 + 0.5);
    unsigned long long whole = scaled / 1000000ULL;
    unsigned long frac = (unsigned long)(scaled % 1000000ULL);
    if (whole == 0 && frac == 0)
        negative = 0;

    char digits[8];
    int n = 0;
    if (frac)
    {
        rt_snprintf(digits, sizeof(digits), "%06lu", frac);
        n = 6;
        while (n > 0 && digits[n - 1] == '0')
            digits[--n] = '\0';
    }
    if (n)
        return rt_snprintf(buf, size, "%s%llu.%s", negative ? "-" : "", whole, digits);
    return rt_snprintf(buf, size, "%s%llu", negative ? "-" : "", whole);
}
