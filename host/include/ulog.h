/* ulog.h of the host port: LOG_E/W/I/D as RT-Thread's ulog defines them,
 * filtered by the file's LOG_LVL, printed by the host port's ulog_output. */
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

#ifdef __cplusplus
extern "C" {
#endif
void ulog_output(rt_uint32_t level, const char *tag, rt_bool_t newline, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
#ifdef __cplusplus
}
#endif

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
#define LOG_RAW(...) rt_kprintf(__VA_ARGS__)

#endif
