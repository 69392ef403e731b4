/*
 * rtthread.h of the host port: the subset of RT-Thread 5.x's kernel API that
 * the agent library and ordinary tool/channel code use, with 5.x's
 * signatures, served on Linux by the host port (src/host, host/port).
 */
#ifndef __RT_THREAD_H__
#define __RT_THREAD_H__

#include <rtconfig.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Basic types, as rttypes.h defines them for a 64-bit CPU with libc. */
typedef int8_t rt_int8_t;
typedef int16_t rt_int16_t;
typedef int32_t rt_int32_t;
typedef int64_t rt_int64_t;
typedef uint8_t rt_uint8_t;
typedef uint16_t rt_uint16_t;
typedef uint32_t rt_uint32_t;
typedef uint64_t rt_uint64_t;
typedef int rt_bool_t;
typedef long rt_base_t;
typedef unsigned long rt_ubase_t;
typedef rt_base_t rt_err_t;
typedef rt_uint32_t rt_time_t;
typedef rt_uint32_t rt_tick_t;
typedef rt_base_t rt_flag_t;
typedef size_t rt_size_t;
typedef ssize_t rt_ssize_t;
typedef rt_base_t rt_off_t;

#define RT_TRUE 1
#define RT_FALSE 0
#define RT_NULL ((void *)0)

/* Error numbers: the set without RT_USING_LIBC (the library reads whichever
 * set the board uses through its C glue). */
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
#define RT_TICK_MAX 0xffffffff

#define rt_align(n) __attribute__((aligned(n)))
#define rt_section(x) __attribute__((section(x)))
#define rt_used __attribute__((used))
#define rt_weak __attribute__((weak))
#define rt_inline static __inline
#define RT_UNUSED(x) ((void)(x))
#define RT_ALIGN(size, align) (((size) + (align) - 1) & ~((align) - 1))
#define RT_ALIGN_DOWN(size, align) ((size) & ~((align) - 1))
#define RT_ASSERT(EX) do { if (!(EX)) rt_host_assert_failed(#EX, __func__, __LINE__); } while (0)

/* Kernel objects are opaque here: code only handles their pointers. */
struct rt_thread;
struct rt_semaphore;
struct rt_mutex;
struct rt_mailbox;
struct rt_messagequeue;
struct rt_device;
typedef struct rt_thread *rt_thread_t;
typedef struct rt_semaphore *rt_sem_t;
typedef struct rt_mutex *rt_mutex_t;
typedef struct rt_mailbox *rt_mailbox_t;
/* The member code outside the kernel reads (the glue, for agent_is_busy):
 * how many values wait. The host port's mailbox starts with it. */
struct rt_mailbox
{
    rt_uint16_t entry;
};
typedef struct rt_messagequeue *rt_mq_t;
typedef struct rt_device *rt_device_t;
/* The members of a device that code outside the kernel reads: the real
 * struct rt_device starts with a struct rt_object (its name first) and has
 * rx_indicate/tx_complete callbacks; the host port's console is one. */
struct rt_device
{
    struct
    {
        char name[RT_NAME_MAX];
    } parent;
    rt_err_t (*rx_indicate)(rt_device_t dev, rt_size_t size);
    rt_err_t (*tx_complete)(rt_device_t dev, void *buffer);
    void *user_data;
};

#define RT_DEVICE_OFLAG_RDWR 0x003
#define RT_DEVICE_FLAG_INT_RX 0x100

/* Threads and time */
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
rt_err_t rt_thread_yield(void);
rt_uint8_t rt_interrupt_get_nest(void);

/* Memory */
void *rt_malloc(rt_size_t size);
void rt_free(void *ptr);
void *rt_realloc(void *ptr, rt_size_t newsize);
void *rt_calloc(rt_size_t count, rt_size_t size);
void *rt_malloc_align(rt_size_t size, rt_size_t align);
void rt_free_align(void *ptr);
void rt_memory_info(rt_size_t *total, rt_size_t *used, rt_size_t *max_used);

/* IPC */
rt_sem_t rt_sem_create(const char *name, rt_uint32_t value, rt_uint8_t flag);
rt_err_t rt_sem_delete(rt_sem_t sem);
rt_err_t rt_sem_take(rt_sem_t sem, rt_int32_t timeout);
rt_err_t rt_sem_trytake(rt_sem_t sem);
rt_err_t rt_sem_release(rt_sem_t sem);
rt_mutex_t rt_mutex_create(const char *name, rt_uint8_t flag);
rt_err_t rt_mutex_delete(rt_mutex_t mutex);
rt_err_t rt_mutex_take(rt_mutex_t mutex, rt_int32_t timeout);
rt_err_t rt_mutex_release(rt_mutex_t mutex);
rt_mailbox_t rt_mb_create(const char *name, rt_size_t size, rt_uint8_t flag);
rt_err_t rt_mb_delete(rt_mailbox_t mb);
rt_err_t rt_mb_send(rt_mailbox_t mb, rt_ubase_t value);
rt_err_t rt_mb_send_wait(rt_mailbox_t mb, rt_ubase_t value, rt_int32_t timeout);
rt_err_t rt_mb_recv(rt_mailbox_t mb, rt_ubase_t *value, rt_int32_t timeout);
rt_mq_t rt_mq_create(const char *name, rt_size_t msg_size, rt_size_t max_msgs, rt_uint8_t flag);
rt_err_t rt_mq_delete(rt_mq_t mq);
rt_err_t rt_mq_send(rt_mq_t mq, const void *buffer, rt_size_t size);
rt_ssize_t rt_mq_recv(rt_mq_t mq, void *buffer, rt_size_t size, rt_int32_t timeout);

/* Devices (the console) */
rt_device_t rt_device_find(const char *name);
rt_err_t rt_device_open(rt_device_t dev, rt_uint16_t oflag);
rt_err_t rt_device_close(rt_device_t dev);
rt_ssize_t rt_device_read(rt_device_t dev, rt_off_t pos, void *buffer, rt_size_t size);
rt_ssize_t rt_device_write(rt_device_t dev, rt_off_t pos, const void *buffer, rt_size_t size);
rt_err_t rt_device_set_rx_indicate(rt_device_t dev, rt_err_t (*rx_ind)(rt_device_t dev, rt_size_t size));

/* klibc and console */
int rt_kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rt_kputs(const char *str);
int rt_snprintf(char *buf, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
int rt_sprintf(char *buf, const char *format, ...) __attribute__((format(printf, 2, 3)));
int rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list args);
char *rt_strdup(const char *s);
size_t rt_strlen(const char *src);
size_t rt_strnlen(const char *s, size_t maxlen);
int rt_strcmp(const char *cs, const char *ct);
int rt_strncmp(const char *cs, const char *ct, size_t count);
int rt_strcasecmp(const char *a, const char *b);
char *rt_strncpy(char *dest, const char *src, size_t n);
char *rt_strcpy(char *dest, const char *src);
char *rt_strstr(const char *str1, const char *str2);
void *rt_memset(void *s, int c, size_t n);
void *rt_memcpy(void *dest, const void *src, size_t n);
void *rt_memmove(void *dest, const void *src, size_t n);
int rt_memcmp(const void *cs, const void *ct, size_t count);

/* Host port only: an RT_ASSERT that failed. */
void rt_host_assert_failed(const char *ex, const char *func, int line);

#ifdef __cplusplus
}
#endif

#ifdef RT_USING_FINSH
#include <finsh.h>
#endif

#endif /* __RT_THREAD_H__ */
