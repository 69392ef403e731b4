/*
 * The MCP server's sockets: BSD sockets, which every networked RT-Thread
 * has through SAL (RT_USING_SAL with SAL_USING_POSIX), and the host's own
 * on Linux. Only C sees struct sockaddr_in and struct timeval as the board
 * lays them out (lwIP's sockaddr_in starts with sin_len, Linux's does not),
 * so the library calls these few functions and never the socket API
 * itself.
 *
 * Compiled with PKG_AGENT_MCP_SERVER (the SConscript adds it then) and in
 * the host port (AGENT_ALL_PARTS).
 */
#include <rtthread.h>
#include <rtconfig.h>

#if defined(PKG_AGENT_MCP_SERVER) || defined(AGENT_ALL_PARTS)
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#ifdef __linux__
#include <unistd.h>
#define agent_socket_close close
#else
#define agent_socket_close closesocket
#endif
#include "agent_glue.h"

#ifndef SHUT_WR
#define SHUT_WR 1 /* SAL's and lwIP's value, and Linux's */
#endif

/* SO_RCVTIMEO and SO_SNDTIMEO of `fd` to `ms` (at least 1 ms: lwIP, like
 * Linux, reads a zero timeval as "wait forever"). */
static int set_timeouts(int fd, int ms)
{
    struct timeval tv;
    if (ms < 1)
        ms = 1;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
        return -1;
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int agent_mcp_listen(int port, int loopback_only, int accept_poll_ms)
{
    struct sockaddr_in addr;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    /* A restarted agent gets its port back at once (TIME_WAIT). */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
    /* accept() returns after accept_poll_ms without a client, so the
     * server thread sees a stop request (lwIP honours SO_RCVTIMEO in
     * accept with LWIP_SO_RCVTIMEO, as Linux does). */
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 2) != 0
        || set_timeouts(fd, accept_poll_ms) != 0)
    {
        agent_socket_close(fd);
        return -1;
    }
    return fd;
}

int agent_mcp_port(int fd)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    memset(&addr, 0, sizeof(addr));
    if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
        return -1;
    return ntohs(addr.sin_port);
}

int agent_mcp_accept(int fd, int io_timeout_ms)
{
    int client = accept(fd, RT_NULL, RT_NULL);
    if (client < 0)
        return -1;
    if (set_timeouts(client, io_timeout_ms) != 0)
    {
        agent_socket_close(client);
        return -1;
    }
    return client;
}

/* The client's IPv4 address (4 bytes into addr): 4, or -1. */
int agent_mcp_peer(int fd, unsigned char *addr)
{
    struct sockaddr_in peer;
    socklen_t len = sizeof(peer);
    memset(&peer, 0, sizeof(peer));
    if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0 || peer.sin_family != AF_INET)
        return -1;
    memcpy(addr, &peer.sin_addr.s_addr, 4);
    return 4;
}

int agent_mcp_set_timeout(int fd, int ms)
{
    return set_timeouts(fd, ms);
}

/* > 0: bytes read; 0: the client closed, or the connection failed; < 0:
 * nothing yet (the SO_RCVTIMEO timeout or a signal: try again).
 *
 * A failed connection must read as closed, not as "nothing yet": after a
 * reset lwIP keeps the error (ERR_RST is fatal, netconn_recv_data returns it
 * at once on every later call), so recv() fails immediately again and again
 * with ECONNRESET instead of waiting out the timeout. Retrying that spins
 * the server's thread until the request's read deadline (seen on
 * qemu-vexpress-a9 with lwIP 2.0.3: a client that reset after half a head
 * held the server 5 s, the next client waited that long). Linux returns
 * ECONNRESET once and then 0. */
int agent_mcp_recv(int fd, void *buf, int len)
{
    int n = (int)recv(fd, buf, (size_t)len, 0);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return 0;
    return n;
}

int agent_mcp_send(int fd, const void *buf, int len)
{
#ifdef MSG_NOSIGNAL
    /* A client that went away must not end the process with SIGPIPE. */
    return (int)send(fd, buf, (size_t)len, MSG_NOSIGNAL);
#else
    return (int)send(fd, buf, (size_t)len, 0);
#endif
}

/* End the sending side (the answer, then the end of the stream: FIN)
 * while the receiving side stays open, for the server's lingering close
 * (src/wire/http_drain.rs): BSD shutdown(), which SAL maps to lwIP's
 * lwip_shutdown (a FIN after the data queued; the socket still receives).
 * Its failure leaves nothing to do: the close follows. */
void agent_mcp_shutdown_write(int fd)
{
    (void)shutdown(fd, SHUT_WR);
}

void agent_mcp_close(int fd)
{
    if (fd >= 0)
        agent_socket_close(fd);
}

#ifdef __linux__
#include <sys/random.h>
unsigned int agent_glue_mcp_entropy(void)
{
    unsigned int v = 0;
    if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
        v = (unsigned int)rt_tick_get();
    return v;
}
#else
/* Mixed into every session id. A board with a hardware RNG defines this
 * function itself (it is weak here) and returns its numbers. */
__attribute__((weak)) unsigned int agent_glue_mcp_entropy(void)
{
    static unsigned int count;
    return (unsigned int)rt_tick_get() * 2654435761u ^ (unsigned int)(rt_ubase_t)&count ^ ++count;
}
#endif
#endif
