/*
 * Multimodal messages: the size of a file through the board's stat().
 * Compiled with the board's headers, because struct stat is the board's C
 * library's (newlib's, or the host's glibc) and its layout is not the
 * library's to guess. The library itself calls open/read/close directly.
 * On RT-Thread these come from DFS (components/dfs, dfs_posix.c:
 * int stat(const char *file, struct stat *buf)).
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#if defined(PKG_AGENT_MULTIMODAL_ENABLE) || defined(AGENT_ALL_PARTS)
#include <errno.h>
#include <sys/stat.h>

int agent_glue_file_size(const char *path, rt_uint32_t *size)
{
    struct stat st;

    if (path == RT_NULL || size == RT_NULL)
    {
        return AGENT_FILE_ERROR;
    }
    errno = 0;
    if (stat(path, &st) != 0)
    {
        return (errno == ENOENT || errno == ENOTDIR) ? AGENT_FILE_MISSING : AGENT_FILE_ERROR;
    }
    if (!S_ISREG(st.st_mode))
    {
        return AGENT_FILE_NOT_REGULAR;
    }
    if (st.st_size < 0)
    {
        return AGENT_FILE_ERROR;
    }
    /* Compared in the file's own type, so a 64-bit off_t is not cut first. */
    if ((unsigned long long)st.st_size > 0xFFFFFFFFull)
    {
        *size = 0xFFFFFFFFu;
    }
    else
    {
        *size = (rt_uint32_t)st.st_size;
    }
    return 0;
}
#endif
