/* Stand-in errno.h for the cross-build link check on a toolchain without a
 * C library (riscv64-unknown-elf here): newlib's shape. Written for these
 * tests. */
#ifndef _ERRNO_H_STANDIN
#define _ERRNO_H_STANDIN
int *__errno(void);
#define errno (*__errno())
#define ENOENT 2
#define ENOTDIR 20
/* glue/agent_mcp_socket.c tells a receive timeout from a failure. */
#define EINTR 4
#define EAGAIN 11
#define EWOULDBLOCK EAGAIN
#endif
