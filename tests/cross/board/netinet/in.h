/* Stand-in netinet/in.h for the cross-build link check: SAL's sockaddr_in
 * and netdev's byte-order macros (little-endian boards). Written for these
 * tests. */
#ifndef _NETINET_IN_H_STANDIN
#define _NETINET_IN_H_STANDIN
#include <sys/socket.h>
typedef agent_standin_u16 in_port_t;
struct in_addr
{
    agent_standin_u32 s_addr;
};
struct sockaddr_in
{
    agent_standin_u8 sin_len;
    sa_family_t sin_family;
    in_port_t sin_port;
    struct in_addr sin_addr;
    char sin_zero[8];
};
#define INADDR_ANY ((agent_standin_u32)0x00000000UL)
#define INADDR_LOOPBACK ((agent_standin_u32)0x7f000001UL)
#define htons(x) ((agent_standin_u16)((((x) & 0xffu) << 8) | (((x) & 0xff00u) >> 8)))
#define ntohs(x) htons(x)
#define htonl(x) ((((x) & 0xffUL) << 24) | (((x) & 0xff00UL) << 8) | (((x) & 0xff0000UL) >> 8) | (((x) & 0xff000000UL) >> 24))
#endif
