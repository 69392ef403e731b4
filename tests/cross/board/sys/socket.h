/* Stand-in sys/socket.h for the cross-build link check: RT-Thread SAL's
 * declarations with SAL_USING_POSIX (components/net/sal/include/socket/
 * sys_socket/sys/socket.h and sal_socket.h), lwIP's BSD layout with
 * sin_len. Written for these tests. */
#ifndef _SYS_SOCKET_H_STANDIN
#define _SYS_SOCKET_H_STANDIN
#include <stddef.h>
/* Fixed-width types by hand: a toolchain without a C library has no
 * stdint.h to include. */
typedef unsigned char agent_standin_u8;
typedef unsigned short agent_standin_u16;
typedef unsigned int agent_standin_u32;
typedef agent_standin_u32 socklen_t;
typedef agent_standin_u8 sa_family_t;
#define SOCK_STREAM 1
#define AF_INET 2
#define SOL_SOCKET 0xfff
#define SO_REUSEADDR 0x0004
#define SO_SNDTIMEO 0x1005
#define SO_RCVTIMEO 0x1006
#define SHUT_WR 1
struct sockaddr
{
    agent_standin_u8 sa_len;
    sa_family_t sa_family;
    char sa_data[14];
};
int accept(int s, struct sockaddr *addr, socklen_t *addrlen);
int bind(int s, const struct sockaddr *name, socklen_t namelen);
int getsockname(int s, struct sockaddr *name, socklen_t *namelen);
int setsockopt(int s, int level, int optname, const void *optval, socklen_t optlen);
int shutdown(int s, int how);
int listen(int s, int backlog);
int recv(int s, void *mem, size_t len, int flags);
int send(int s, const void *dataptr, size_t size, int flags);
int socket(int domain, int type, int protocol);
int closesocket(int s);
#endif
