/* <stdlib.h> of the simdojo GPU device runtime.
 *
 * malloc and free are served by the host (MALLOC/FREE opcodes); exit and
 * abort end the whole program through the host (EXIT/ABORT opcodes). */
#ifndef __DOJO_STDLIB_H
#define __DOJO_STDLIB_H

#include <__dojo_config.h>
#include <stddef.h>

__DOJO_BEGIN_DECLS

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1

void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void free(void *ptr);
__attribute__((noreturn)) void exit(int status);
__attribute__((noreturn)) void abort(void);
int atexit(void (*fn)(void));
int atoi(const char *s);
long atol(const char *s);
long long atoll(const char *s);
long strtol(const char *__DOJO_RESTRICT s, char **__DOJO_RESTRICT end, int base);
unsigned long strtoul(const char *__DOJO_RESTRICT s, char **__DOJO_RESTRICT end, int base);
int abs(int x);
long labs(long x);
long long llabs(long long x);

__DOJO_END_DECLS

#endif
