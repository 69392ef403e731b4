/* Stand-in sys/time.h for the cross-build link check on a toolchain without
 * a C library: struct timeval as newlib and RT-Thread's libc lay it out.
 * Written for these tests. */
#ifndef _SYS_TIME_H_STANDIN
#define _SYS_TIME_H_STANDIN
struct timeval
{
    long tv_sec;
    long tv_usec;
};
#endif
