/* <string.h> of the simdojo GPU device runtime: plain byte loops, no host calls. */
#ifndef __DOJO_STRING_H
#define __DOJO_STRING_H

#include <__dojo_config.h>
#include <stddef.h>

__DOJO_BEGIN_DECLS

void *memcpy(void *__DOJO_RESTRICT dst, const void *__DOJO_RESTRICT src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *__DOJO_RESTRICT dst, const char *__DOJO_RESTRICT src);
char *strncpy(char *__DOJO_RESTRICT dst, const char *__DOJO_RESTRICT src, size_t n);
char *strcat(char *__DOJO_RESTRICT dst, const char *__DOJO_RESTRICT src);
char *strncat(char *__DOJO_RESTRICT dst, const char *__DOJO_RESTRICT src, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
char *strstr(const char *haystack, const char *needle);
char *strdup(const char *s);

__DOJO_END_DECLS

#endif
