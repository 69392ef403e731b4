/*
 * Stand-in <ulog.h> for the cross-build link check: LOG_E/W/I/D reach
 * ulog_output, filtered by the file's LOG_LVL. Written for these tests.
 */
#ifndef _ULOG_H_
#define _ULOG_H_

#include <rtthread.h>

#define LOG_LVL_ASSERT 0
#define LOG_LVL_ERROR 3
#define LOG_LVL_WARNING 4
#define LOG_LVL_INFO 6
#define LOG_LVL_DBG 7

#ifndef LOG_TAG
#define LOG_TAG "NO_TAG"
#endif
#ifndef LOG_LVL
#define LOG_LVL LOG_LVL_DBG
#endif

void ulog_output(rt_uint32_t level, const char *tag, rt_bool_t newline, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

#if LOG_LVL >= LOG_LVL_ERROR
#define LOG_E(...) ulog_output(LOG_LVL_ERROR, LOG_TAG, RT_TRUE, __VA_ARGS__)
#else
#define LOG_E(...)
#endif
#if LOG_LVL >= LOG_LVL_WARNING
#define LOG_W(...) ulog_output(LOG_LVL_WARNING, LOG_TAG, RT_TRUE, __VA_ARGS__)
#else
#define LOG_W(...)
#endif
#if LOG_LVL >= LOG_LVL_INFO
#define LOG_I(...) ulog_output(LOG_LVL_INFO, LOG_TAG, RT_TRUE, __VA_ARGS__)
#else
#define LOG_I(...)
#endif
#if LOG_LVL >= LOG_LVL_DBG
#define LOG_D(...) ulog_output(LOG_LVL_DBG, LOG_TAG, RT_TRUE, __VA_ARGS__)
#else
#define LOG_D(...)
#endif

#endif
