/*
 * Stand-in <rtthread.h> for the cross-build link check (tests/cross): just
 * the declarations the package's C files and headers use, written for these
 * tests with RT-Thread 5.x's types and signatures for a 32-bit board without
 * libc (see shared/spec/rtthread-api.md). Not RT-Thread's header.
 */
#ifndef __RT_THREAD_H__
#define __RT_THREAD_H__

#include <rtconfig.h>
#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef signed char rt_int8_t;
typedef signed short rt_int16_t;
typedef signed int rt_int32_t;
typedef signed long long rt_int64_t;
typedef unsigned char rt_uint8_t;
typedef unsigned short rt_uint16_t;
typedef unsigned int rt_uint32_t;
typedef unsigned long long rt_uint64_t;
typedef int rt_bool_t;
typedef rt_int32_t rt_base_t;
typedef rt_uint32_t rt_ubase_t;
typedef rt_base_t rt_err_t;
typedef rt_uint32_t rt_time_t;
typedef rt_uint32_t rt_tick_t;
typedef rt_base_t rt_flag_t;
typedef rt_ubase_t rt_size_t;
typedef rt_base_t rt_ssize_t;
typedef rt_base_t rt_off_t;

#define RT_TRUE 1
#define RT_FALSE 0
#define RT_NULL ((void *)0)

#define RT_EOK 0
#define RT_ERROR 1
#define RT_ETIMEOUT 2
#define RT_EFULL 3
#define RT_EEMPTY 4
#define RT_ENOMEM 5
#define RT_ENOSYS 6
#define RT_EBUSY 7
#define RT_EIO 8
#define RT_EINTR 9
#define RT_EINVAL 10

#define RT_WAITING_FOREVER -1
#define RT_WAITING_NO 0
#define RT_IPC_FLAG_FIFO 0x00
#define RT_IPC_FLAG_PRIO 0x01

#define rt_align(n) __attribute__((aligned(n)))
#define rt_section(x) __attribute__((section(x)))
#define rt_used __attribute__((used))
#define rt_weak __attribute__((weak))
#define rt_inline static __inline
#define RT_UNUSED(x) ((void)(x))

/* The members code outside the kernel reads (the glue's stack high-water,
 * as list_thread does); the real struct has many more before and after. */
struct rt_thread
{
    char name[RT_NAME_MAX];
    void *sp;
    void *entry;
    void *parameter;
    void *stack_addr;
    rt_uint32_t stack_size;
};
struct rt_semaphore;
struct rt_mutex;
struct rt_mailbox;
struct rt_messagequeue;
struct rt_device;
typedef struct rt_thread *rt_thread_t;
typedef struct rt_semaphore *rt_sem_t;
typedef struct rt_mutex *rt_mutex_t;
typedef struct rt_mailbox *rt_mailbox_t;
typedef struct rt_messagequeue *rt_mq_t;
typedef struct rt_device *rt_device_t;
/* The device members the glue reads (the real struct has more before them). */
struct rt_device
{
    char name[8];
    rt_err_t (*rx_indicate)(rt_device_t dev, rt_size_t size);
    rt_err_t (*tx_complete)(rt_device_t dev, void *buffer);
    void *user_data;
};
/* The mailbox members up to the one the glue reads, as RT-Thread 5.3 lays
 * them out (the IPC object stands in as its size on a 32-bit board). */
struct rt_mailbox
{
    char parent[28];
    rt_ubase_t *msg_pool;
    rt_uint16_t size;
    rt_uint16_t entry;
};

rt_tick_t rt_tick_get(void);
rt_tick_t rt_tick_from_millisecond(rt_int32_t ms);
rt_thread_t rt_thread_create(const char *name, void (*entry)(void *parameter), void *parameter,
                             rt_uint32_t stack_size, rt_uint8_t priority, rt_uint32_t tick);
rt_err_t rt_thread_delete(rt_thread_t thread);
rt_thread_t rt_thread_self(void);
rt_thread_t rt_thread_find(char *name);
rt_err_t rt_thread_startup(rt_thread_t thread);
rt_err_t rt_thread_delay(rt_tick_t tick);
rt_err_t rt_thread_mdelay(rt_int32_t ms);

void *rt_malloc(rt_size_t size);
void rt_free(void *ptr);
void *rt_realloc(void *ptr, rt_size_t newsize);
void *rt_calloc(rt_size_t count, rt_size_t size);
void rt_memory_info(rt_size_t *total, rt_size_t *used, rt_size_t *max_used);

rt_sem_t rt_sem_create(const char *name, rt_uint32_t value, rt_uint8_t flag);
rt_err_t rt_sem_delete(rt_sem_t sem);
rt_err_t rt_sem_take(rt_sem_t sem, rt_int32_t timeout);
rt_err_t rt_sem_release(rt_sem_t sem);
rt_mailbox_t rt_mb_create(const char *name, rt_size_t size, rt_uint8_t flag);
rt_err_t rt_mb_delete(rt_mailbox_t mb);
rt_err_t rt_mb_send(rt_mailbox_t mb, rt_ubase_t value);
rt_err_t rt_mb_recv(rt_mailbox_t mb, rt_ubase_t *value, rt_int32_t timeout);
rt_mq_t rt_mq_create(const char *name, rt_size_t msg_size, rt_size_t max_msgs, rt_uint8_t flag);
rt_err_t rt_mq_delete(rt_mq_t mq);

rt_device_t rt_device_find(const char *name);

int rt_kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rt_snprintf(char *buf, rt_size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
int rt_vsnprintf(char *buf, rt_size_t size, const char *fmt, va_list args);
char *rt_strdup(const char *s);
rt_size_t rt_strlen(const char *src);
int rt_strcmp(const char *cs, const char *ct);
int rt_strncmp(const char *cs, const char *ct, rt_size_t count);
char *rt_strncpy(char *dest, const char *src, rt_size_t n);
void *rt_memset(void *s, int c, rt_ubase_t count);
void *rt_memcpy(void *dest, const void *src, rt_ubase_t n);
void *rt_memmove(void *dest, const void *src, rt_size_t n);

#ifdef __cplusplus
}
#endif

#ifdef RT_USING_FINSH
#include <finsh.h>
#endif

#endif /* __RT_THREAD_H__ */
