/*
 * rtdevice.h for the host build of paho-mqtt's pipe mode (tests only): the
 * one part of RT-Thread's device API that paho_mqtt_pipe.c calls, the named
 * pipe of components/drivers/ipc/pipe.c, served on Linux by pipe_host.c.
 *
 * On a board rt_pipe_create registers a device "<name>" that open("/dev/<name>")
 * (DFS with devfs, RT_USING_POSIX_PIPE) reaches; here the pipe is a Linux
 * pipe and paho's open() of "/dev/<name>" is redirected to
 * rt_host_pipe_open() (paho_host.h), which hands out a duplicate of its read
 * or write end.
 */
#ifndef RT_HOST_TEST_RTDEVICE_H__
#define RT_HOST_TEST_RTDEVICE_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What code outside the kernel reads of a pipe: its device's object name
 * (paho: pipe_device->parent.parent.name), as in RT-Thread 5.x, where
 * struct rt_pipe_device starts with its struct rt_device. */
struct rt_pipe_device
{
    struct rt_device parent;
    rt_uint16_t bufsz;
};
typedef struct rt_pipe_device rt_pipe_t;

/* RT-Thread 5.x: the pipe struct from the heap and a device named `name`;
 * NULL when the name is taken or memory is short. */
rt_pipe_t *rt_pipe_create(const char *name, int bufsz);
/* Unregister and free the pipe named `name`: 0, or -RT_EINVAL when there
 * is none. */
int rt_pipe_delete(const char *name);

/* Host only: open(2) for "/dev/<pipe name>" (O_RDONLY: the read end,
 * O_WRONLY: the write end); any other path goes to the real open(2). */
int rt_host_pipe_open(const char *path, int flags, ...);

#ifdef __cplusplus
}
#endif

#endif
