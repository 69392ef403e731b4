/*
 * Stand-in <string.h> for toolchains that ship no C library headers (Debian's
 * gcc-riscv64-unknown-elf): the functions a board's libc provides, declared
 * for the cross-build link check only. Written for these tests.
 */
#ifndef _RTT_AGENT_STANDIN_STRING_H
#define _RTT_AGENT_STANDIN_STRING_H

#include <stddef.h>

void *memcpy(void *dest, const void *src, size_t n);
void *memmove(void *dest, const void *src, size_t n);
void *memset(void *s, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t maxlen);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *dest, const char *src);
char *strncpy(char *dest, const char *src, size_t n);
char *strcat(char *dest, const char *src);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
char *strstr(const char *haystack, const char *needle);
char *strdup(const char *s);

#endif
