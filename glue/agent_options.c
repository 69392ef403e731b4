/*
 * Options the library reads through small getters rather than through
 * struct agent_board_config: the summary of trimmed turns
 * (src/abilities/memory_summary/mod.rs) and tools for models without function calling
 * (src/abilities/tools_text/mod.rs).
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#ifndef PKG_AGENT_SUMMARY_MAX_LEN
#define PKG_AGENT_SUMMARY_MAX_LEN 600
#endif

int agent_glue_summary_max_len(void)
{
#ifdef PKG_AGENT_SUMMARY
    return PKG_AGENT_SUMMARY_MAX_LEN;
#else
    return 0;
#endif
}

int agent_glue_tools_text(void)
{
#ifdef PKG_AGENT_TOOLS_TEXT
    return 1;
#else
    return 0;
#endif
}

/*
 * The MCP server's options (src/abilities/mcp_server/server.rs), by number, so the library
 * needs no struct layout for them: 0 enabled, 1 port, 2 largest body,
 * 3 sessions, 4 session idle seconds, 5 tools per page, 6 thread stack,
 * 7 thread priority, 8 loopback only, 9 no token allowed
 * (PKG_AGENT_MCP_ALLOW_ANONYMOUS); texts: 0 path, 1 token, 2 origins.
 */
#ifndef PKG_AGENT_MCP_PORT
#define PKG_AGENT_MCP_PORT 8000
#endif
#ifndef PKG_AGENT_MCP_MAX_BODY
#define PKG_AGENT_MCP_MAX_BODY 4096
#endif
#ifndef PKG_AGENT_MCP_MAX_SESSIONS
#define PKG_AGENT_MCP_MAX_SESSIONS 4
#endif
#ifndef PKG_AGENT_MCP_SESSION_IDLE_S
#define PKG_AGENT_MCP_SESSION_IDLE_S 600
#endif
#ifndef PKG_AGENT_MCP_PAGE_SIZE
#define PKG_AGENT_MCP_PAGE_SIZE 16
#endif
#ifndef PKG_AGENT_MCP_THREAD_STACK
#define PKG_AGENT_MCP_THREAD_STACK 6144
#endif
#ifndef PKG_AGENT_MCP_THREAD_PRIORITY
#define PKG_AGENT_MCP_THREAD_PRIORITY 21
#endif
#ifndef PKG_AGENT_MCP_PATH
#define PKG_AGENT_MCP_PATH "/mcp"
#endif
#ifndef PKG_AGENT_MCP_TOKEN
#define PKG_AGENT_MCP_TOKEN ""
#endif
#ifndef PKG_AGENT_MCP_ORIGINS
#define PKG_AGENT_MCP_ORIGINS ""
#endif

int agent_glue_mcp_option(int which)
{
    switch (which)
    {
#ifdef PKG_AGENT_MCP_SERVER
    case 0: return 1;
#endif
    case 1: return PKG_AGENT_MCP_PORT;
    case 2: return PKG_AGENT_MCP_MAX_BODY;
    case 3: return PKG_AGENT_MCP_MAX_SESSIONS;
    case 4: return PKG_AGENT_MCP_SESSION_IDLE_S;
    case 5: return PKG_AGENT_MCP_PAGE_SIZE;
    case 6: return PKG_AGENT_MCP_THREAD_STACK;
    case 7: return PKG_AGENT_MCP_THREAD_PRIORITY;
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
    /* The host port serves on 127.0.0.1 only. */
    case 8: return 1;
#endif
#ifdef PKG_AGENT_MCP_ALLOW_ANONYMOUS
    case 9: return 1;
#endif
    default: return 0;
    }
}

const char *agent_glue_mcp_text(int which)
{
    switch (which)
    {
    case 0: return PKG_AGENT_MCP_PATH;
    case 1: return PKG_AGENT_MCP_TOKEN;
    default: return PKG_AGENT_MCP_ORIGINS;
    }
}

/*
 * The state file (PKG_AGENT_STATE_FILE; src/ffi/config.rs): the tokens set
 * at run time. Written whole to "<file>.tmp" and renamed over the file, so a
 * reset while writing leaves the old file or the new one, never half of
 * one. DFS's elm-fat cannot rename onto an existing file (FR_EXIST): there
 * the old file is removed first, and a reset between the two steps leaves
 * only "<file>.tmp", which the reader then takes. On the host the
 * simulator's file is RTT_AGENT_STATE_FILE from the environment.
 */
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
#include <stdlib.h>
#define AGENT_STATE_IO 1
const char *agent_glue_state_file(void)
{
    const char *path = getenv("RTT_AGENT_STATE_FILE");
    return path ? path : "";
}
#else
#ifndef PKG_AGENT_STATE_FILE
#define PKG_AGENT_STATE_FILE ""
#endif
#if defined(DFS_USING_POSIX)
#define AGENT_STATE_IO 1
#endif
const char *agent_glue_state_file(void)
{
#ifdef AGENT_STATE_IO
    return PKG_AGENT_STATE_FILE;
#else
    return "";
#endif
}
#endif

/*
 * The notes file (PKG_AGENT_NOTES; src/abilities/notes/mod.rs): its path and
 * bound. It is read and written with the state file's functions below.
 * On the host the simulator's file is RTT_AGENT_NOTES_FILE.
 */
#ifndef PKG_AGENT_NOTES_MAX
#define PKG_AGENT_NOTES_MAX 2048
#endif
int agent_glue_notes_max(void)
{
    return PKG_AGENT_NOTES_MAX;
}
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
const char *agent_glue_notes_file(void)
{
    const char *path = getenv("RTT_AGENT_NOTES_FILE");
    return path ? path : "";
}
#else
#ifndef PKG_AGENT_NOTES_FILE
#define PKG_AGENT_NOTES_FILE ""
#endif
#if defined(PKG_AGENT_NOTES) && !defined(DFS_USING_POSIX)
#error "PKG_AGENT_NOTES keeps its file on DFS: enable RT_USING_DFS with its POSIX file API (DFS_USING_POSIX)"
#endif
const char *agent_glue_notes_file(void)
{
#ifdef AGENT_STATE_IO
    return PKG_AGENT_NOTES_FILE;
#else
    return "";
#endif
}
#endif

/*
 * The schedule file (PKG_AGENT_SCHEDULE; src/abilities/schedule/mod.rs), kept
 * like the notes; on the host RTT_AGENT_SCHEDULE_FILE.
 */
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
const char *agent_glue_schedule_file(void)
{
    const char *path = getenv("RTT_AGENT_SCHEDULE_FILE");
    return path ? path : "";
}
#else
#ifndef PKG_AGENT_SCHEDULE_FILE
#define PKG_AGENT_SCHEDULE_FILE ""
#endif
#if defined(PKG_AGENT_SCHEDULE) && !defined(DFS_USING_POSIX)
#error "PKG_AGENT_SCHEDULE keeps its entries on DFS: enable RT_USING_DFS with its POSIX file API (DFS_USING_POSIX)"
#endif
const char *agent_glue_schedule_file(void)
{
#ifdef AGENT_STATE_IO
    return PKG_AGENT_SCHEDULE_FILE;
#else
    return "";
#endif
}
#endif

/*
 * The sub-agent profiles file (PKG_AGENT_SUBAGENTS; src/abilities/sub_agents/mod.rs),
 * read at the agent's start; on the host RTT_AGENT_PROFILES_FILE.
 */
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
const char *agent_glue_profiles_file(void)
{
    const char *path = getenv("RTT_AGENT_PROFILES_FILE");
    return path ? path : "";
}
#else
#ifndef PKG_AGENT_PROFILES_FILE
#define PKG_AGENT_PROFILES_FILE ""
#endif
const char *agent_glue_profiles_file(void)
{
#ifdef AGENT_STATE_IO
    return PKG_AGENT_PROFILES_FILE;
#else
    return "";
#endif
}
#endif

/*
 * The local time for cron entries: minute, hour, day of month (1-31),
 * month (1-12), weekday (0 Sunday); 0, or -1 when the board has no clock
 * or it is not set (before 2024: an RTC that never was).
 */
#if defined(__linux__) || defined(RT_USING_RTC)
#include <time.h>
int agent_glue_local_time(int *out)
{
    time_t now = time(RT_NULL);
    struct tm tm;
    if (out == RT_NULL || now < (time_t)1704067200 || localtime_r(&now, &tm) == RT_NULL)
        return -1;
    out[0] = tm.tm_min;
    out[1] = tm.tm_hour;
    out[2] = tm.tm_mday;
    out[3] = tm.tm_mon + 1;
    out[4] = tm.tm_wday;
    return 0;
}
#else
int agent_glue_local_time(int *out)
{
    (void)out;
    return -1;
}
#endif

#ifdef AGENT_STATE_IO
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* fsync(), where "this file system has nothing to flush" is not a failed
 * write: DFS v1's fsync() returns -ENOSYS (errno untouched) on a file
 * system without a flush operation (ramfs, tmpfs, NFS), and a libc's
 * returns -1 with errno ENOSYS where syncing is not supported. Counted as
 * a failure, no kept file (state, notes, schedule) could be written there
 * (found on lm3s with the schedule on ramfs: tests/qemu/run.sh --soak). */
static int synced(int fd)
{
    int r;
    errno = 0;
    r = fsync(fd);
    return r == 0 || r == -ENOSYS || (r == -1 && errno == ENOSYS);
}

static int temp_name(const char *path, char *out, size_t size)
{
    size_t len = strlen(path);
    if (len + 5 > size)
        return -1;
    memcpy(out, path, len);
    memcpy(out + len, ".tmp", 5);
    return 0;
}

/* The file's bytes (up to `size`): their count, -1 when there is no such
 * file, -2 when it exists but a read fails (a card's I/O error): the
 * caller must not take that for an empty file. */
static int read_all(const char *path, char *buf, int size)
{
    int total = 0;
    int fd = open(path, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    while (total < size)
    {
        int n = (int)read(fd, buf + total, (size_t)(size - total));
        if (n < 0)
        {
            close(fd);
            return -2;
        }
        if (n == 0)
            break;
        total += n;
    }
    close(fd);
    return total;
}

int agent_glue_state_read(const char *path, char *buf, int size)
{
    char tmp[128];
    int n;
    if (path == RT_NULL || buf == RT_NULL || size <= 0 || path[0] == '\0')
        return -1;
    n = read_all(path, buf, size);
    if (n == -1 && temp_name(path, tmp, sizeof(tmp)) == 0)
        n = read_all(tmp, buf, size); /* a reset between remove and rename */
    return n;
}

int agent_glue_state_write(const char *path, const char *data, int len)
{
    char tmp[128];
    int fd, written = 0;
    if (path == RT_NULL || data == RT_NULL || len < 0 || temp_name(path, tmp, sizeof(tmp)) != 0)
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    while (written < len)
    {
        int n = (int)write(fd, data + written, (size_t)(len - written));
        if (n <= 0)
            break;
        written += n;
    }
    if (written != len || !synced(fd))
    {
        close(fd);
        unlink(tmp);
        return -1;
    }
    close(fd);
    if (rename(tmp, path) != 0)
    {
        /* elm-fat: the target must not exist. */
        unlink(path);
        if (rename(tmp, path) != 0)
            return -1;
    }
    return 0;
}
int agent_glue_file_set_aside(const char *path)
{
    char bad[128];
    size_t len;
    if (path == RT_NULL)
        return -1;
    len = strlen(path);
    if (len + 5 > sizeof(bad))
        return -1;
    memcpy(bad, path, len);
    memcpy(bad + len, ".bad", 5);
    unlink(bad); /* elm-fat: the target must not exist */
    return rename(path, bad) == 0 ? 0 : -1;
}
#else
int agent_glue_file_set_aside(const char *path)
{
    (void)path;
    return -1;
}

int agent_glue_state_read(const char *path, char *buf, int size)
{
    (void)path;
    (void)buf;
    (void)size;
    return -1;
}

int agent_glue_state_write(const char *path, const char *data, int len)
{
    (void)path;
    (void)data;
    (void)len;
    return -1;
}
#endif
