/*
 * RT-Thread's named pipes (components/drivers/ipc/pipe.c, RT-Thread 5.x) on
 * Linux, for the host build of paho-mqtt's pipe mode (tests only).
 *
 * paho's worker creates a pipe "MQTTn", opens "/dev/MQTTn" twice (write end,
 * then read end), select()s on the read end beside its socket, and
 * publishers write their commands into the write end from other threads. A
 * Linux pipe does the same: rt_pipe_create makes one and keeps both ends;
 * rt_host_pipe_open (paho's open(), see paho_host.h) hands out duplicates;
 * rt_pipe_delete closes the kept ends and frees the pipe. Reads and writes
 * block as on a board (RT-Thread's pipe blocks an fd opened without
 * O_NONBLOCK).
 *
 * The pipe's struct comes from the board's heap (rt_calloc), as on a board,
 * so a pipe paho forgets shows in the heap figures; Linux keeps the bytes.
 */
#define _GNU_SOURCE /* pipe2, F_SETPIPE_SZ, F_DUPFD_CLOEXEC */
#include <rtthread.h>
#include <rtdevice.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#define HOST_PIPES_MAX 8

static struct
{
    rt_pipe_t *pipe; /* NULL: a free slot */
    int fds[2];      /* the Linux pipe: [0] read end, [1] write end */
} host_pipes[HOST_PIPES_MAX];
static pthread_mutex_t host_pipes_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of the pipe named `name`, or -1. Under the lock. */
static int find_pipe(const char *name)
{
    for (int i = 0; i < HOST_PIPES_MAX; i++)
    {
        if (host_pipes[i].pipe && strncmp(host_pipes[i].pipe->parent.parent.name, name, RT_NAME_MAX) == 0)
            return i;
    }
    return -1;
}

rt_pipe_t *rt_pipe_create(const char *name, int bufsz)
{
    rt_pipe_t *pipe = RT_NULL;
    int fds[2];

    if (name == RT_NULL || name[0] == '\0' || bufsz <= 0)
        return RT_NULL;
    pthread_mutex_lock(&host_pipes_lock);
    int slot = -1;
    for (int i = 0; i < HOST_PIPES_MAX && slot < 0; i++)
    {
        if (host_pipes[i].pipe == RT_NULL)
            slot = i;
    }
    /* A name already registered: rt_device_register refuses it. */
    if (slot >= 0 && find_pipe(name) < 0)
    {
        pipe = rt_calloc(1, sizeof(*pipe));
        if (pipe && pipe2(fds, O_CLOEXEC) == 0)
        {
            strncpy(pipe->parent.parent.name, name, RT_NAME_MAX - 1);
            pipe->bufsz = (rt_uint16_t)bufsz;
            /* RT-Thread's ring buffer holds bufsz bytes; Linux rounds the
             * size up to a page (best effort). */
            (void)fcntl(fds[1], F_SETPIPE_SZ, bufsz);
            host_pipes[slot].pipe = pipe;
            host_pipes[slot].fds[0] = fds[0];
            host_pipes[slot].fds[1] = fds[1];
        }
        else
        {
            rt_free(pipe);
            pipe = RT_NULL;
        }
    }
    pthread_mutex_unlock(&host_pipes_lock);
    return pipe;
}

int rt_pipe_delete(const char *name)
{
    rt_pipe_t *pipe = RT_NULL;

    if (name == RT_NULL)
        return -RT_EINVAL;
    pthread_mutex_lock(&host_pipes_lock);
    int slot = find_pipe(name);
    if (slot >= 0)
    {
        pipe = host_pipes[slot].pipe;
        close(host_pipes[slot].fds[0]);
        close(host_pipes[slot].fds[1]);
        host_pipes[slot].pipe = RT_NULL;
    }
    pthread_mutex_unlock(&host_pipes_lock);
    if (pipe == RT_NULL)
        return -RT_EINVAL;
    rt_free(pipe);
    return 0;
}

int rt_host_pipe_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & O_CREAT)
    {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (path && strncmp(path, "/dev/", 5) == 0)
    {
        int fd = -1;
        pthread_mutex_lock(&host_pipes_lock);
        int slot = find_pipe(path + 5);
        if (slot >= 0)
        {
            switch (flags & O_ACCMODE)
            {
            case O_RDONLY:
                fd = fcntl(host_pipes[slot].fds[0], F_DUPFD_CLOEXEC, 0);
                break;
            case O_WRONLY:
                fd = fcntl(host_pipes[slot].fds[1], F_DUPFD_CLOEXEC, 0);
                break;
            default:
                /* Both ends in one fd: not what paho asks for, and a Linux
                 * pipe cannot give it. */
                errno = EINVAL;
                break;
            }
        }
        pthread_mutex_unlock(&host_pipes_lock);
        if (slot >= 0)
            return fd;
    }
    return open(path, flags, mode);
}
