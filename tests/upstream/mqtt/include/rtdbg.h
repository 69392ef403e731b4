/*
 * rtdbg.h for the host build of paho-mqtt (tests only): RT-Thread's debug
 * macros as the kernel maps them when RT_USING_ULOG is on, onto the host
 * port's ulog.h: the file's DBG_SECTION_NAME (or DBG_TAG) is the log tag,
 * DBG_LEVEL (or DBG_LVL) its level.
 */
#ifndef RT_HOST_TEST_RTDBG_H__
#define RT_HOST_TEST_RTDBG_H__

#include <rtthread.h>

#define DBG_ERROR 3
#define DBG_WARNING 4
#define DBG_INFO 6
#define DBG_LOG 7

#if !defined(DBG_TAG) && defined(DBG_SECTION_NAME)
#define DBG_TAG DBG_SECTION_NAME
#endif
#if !defined(DBG_LVL) && defined(DBG_LEVEL)
#define DBG_LVL DBG_LEVEL
#endif

#ifndef LOG_TAG
#ifdef DBG_TAG
#define LOG_TAG DBG_TAG
#else
#define LOG_TAG "DBG"
#endif
#endif
#ifndef LOG_LVL
#ifdef DBG_LVL
#define LOG_LVL DBG_LVL
#else
#define LOG_LVL DBG_WARNING
#endif
#endif

#include <ulog.h>

#define dbg_log(level, ...) rt_kprintf(__VA_ARGS__)
#define dbg_here
#define dbg_enter
#define dbg_exit

#endif
