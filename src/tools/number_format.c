/*
 * agent_format_number: decimal text for a double without %f. RT-Thread's
 * default rt_vsnprintf prints nothing for %f (RT_KLIBC_USING_VSNPRINTF_STANDARD
 * enables it), so tools that report numbers use this instead.
 *
 * It writes the digits itself and hands rt_snprintf only "%s": the default
 * (tiny) rt_vsnprintf of RT-Thread 5.x has no %llu either unless
 * RT_KLIBC_USING_VSNPRINTF_LONGLONG is set (it prints "%lu" for it), and 4.x
 * has neither. tests/c/test_number_format.c pins it against the real
 * src/klibc/rt_vsnprintf_tiny.c when RTT_ROOT is given.
 *
 * It lives with the tools, not the glue: only tools call it, and its double
 * arithmetic (software helpers on a board without a double-precision FPU)
 * is what a tool that sums doubles pays anyway.
 */
#include <rtthread.h>
#include "utils.h"

/* The decimal digits of n, most significant first, after *at (which moves
 * past them). */
static void put_digits(char **at, unsigned long long n, int min_digits)
{
    char reversed[20];
    int count = 0;
    do
    {
        reversed[count++] = (char)('0' + (int)(n % 10u));
        n /= 10u;
    } while (n != 0 && count < (int)sizeof(reversed));
    while (count < min_digits && count < (int)sizeof(reversed))
        reversed[count++] = '0';
    while (count > 0)
        *(*at)++ = reversed[--count];
}

int agent_format_number(char *buf, size_t size, double v)
{
    if (!buf || size == 0)
        return 0;
    if (v != v)
        return rt_snprintf(buf, size, "%s", "nan");
    if (v > 9.0e15 || v < -9.0e15)
        return rt_snprintf(buf, size, "%s", v > 0 ? "inf-or-too-large" : "-inf-or-too-large");

    int negative = v < 0;
    double magnitude = negative ? -v : v;
    /* Rounded half up to six decimals, or fewer where a double has no
     * more (15 significant digits in all), then trailing zeros dropped.
     * Scaled, the value stays below 2^53, where doubles are whole numbers
     * exactly. */
    static const double powers[] = {1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6};
    int whole_digits = 1;
    for (double next = 10.0; magnitude >= next && whole_digits < 16; next *= 10.0)
        whole_digits++;
    int decimals = 15 - whole_digits;
    if (decimals > 6)
        decimals = 6;
    if (decimals < 0)
        decimals = 0;
    double scaled_value = magnitude * powers[decimals];
    /* From 2^52 on every double is whole: adding 0.5 would only round. */
    unsigned long long scaled = scaled_value >= 4503599627370496.0
                                    ? (unsigned long long)scaled_value
                                    : (unsigned long long)(scaled_value + 0.5);
    unsigned long long unit = (unsigned long long)powers[decimals];
    unsigned long long whole = scaled / unit;
    unsigned long long frac = scaled % unit;
    if (whole == 0 && frac == 0)
        negative = 0;

    /* "-", 16 digits (below 9e15), "." and the NUL: 15 digits in all
     * when there are decimals. */
    char text[32];
    char *at = text;
    if (negative)
        *at++ = '-';
    put_digits(&at, whole, 1);
    if (frac)
    {
        *at++ = '.';
        put_digits(&at, frac, decimals);
        while (at[-1] == '0')
            at--;
    }
    *at = '\0';
    return rt_snprintf(buf, size, "%s", text);
}
