/* Stand-in sys/stat.h for the cross-build link check on a toolchain without
 * a C library: the members the glue reads, newlib's names. Written for these
 * tests. */
#ifndef _SYS_STAT_H_STANDIN
#define _SYS_STAT_H_STANDIN
typedef long off_t;
struct stat
{
    unsigned long st_dev;
    unsigned long st_ino;
    unsigned int st_mode;
    unsigned int st_nlink;
    off_t st_size;
};
#define S_IFMT 0170000
#define S_IFREG 0100000
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
int stat(const char *path, struct stat *buf);
#endif
