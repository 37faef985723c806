/* <stdio.h> of the simdojo GPU device runtime.
 *
 * Output goes to the host over the LLVM libc RPC protocol. Only the standard
 * streams exist; they are encoded the way LLVM's server decodes them
 * (1 = stdin, 2 = stdout, 3 = stderr). */
#ifndef __DOJO_STDIO_H
#define __DOJO_STDIO_H

#include <__dojo_config.h>
#include <stdarg.h>
#include <stddef.h>

__DOJO_BEGIN_DECLS

typedef struct __dojo_file FILE;

#define stdin ((FILE *)1)
#define stdout ((FILE *)2)
#define stderr ((FILE *)3)
#define EOF (-1)

int printf(const char *__DOJO_RESTRICT format, ...);
int fprintf(FILE *__DOJO_RESTRICT stream, const char *__DOJO_RESTRICT format, ...);
int vprintf(const char *__DOJO_RESTRICT format, va_list args);
int vfprintf(FILE *__DOJO_RESTRICT stream, const char *__DOJO_RESTRICT format, va_list args);
int puts(const char *s);
int fputs(const char *__DOJO_RESTRICT s, FILE *__DOJO_RESTRICT stream);
int putchar(int c);
int fputc(int c, FILE *stream);
int putc(int c, FILE *stream);
size_t fwrite(const void *__DOJO_RESTRICT data, size_t size, size_t count,
              FILE *__DOJO_RESTRICT stream);
int fflush(FILE *stream);

__DOJO_END_DECLS

#endif
