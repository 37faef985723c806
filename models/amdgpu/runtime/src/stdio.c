/* <stdio.h>: writes and printf through the host.
 *
 * printf sends the format string, asks the host how many bytes of packed
 * arguments it needs (the host parses the format), sends them, then answers
 * the host's requests for the bytes behind each %s pointer until the host
 * replies with the count of characters printed. On AMDGPU a va_list already
 * is a pointer to the packed argument bytes (clang passes variadic arguments
 * as a packed struct), which is why this runtime, like LLVM libc on AMDGPU,
 * uses the _PACKED printf opcodes. The host build packs them by walking the
 * format with va_arg. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rpc_client.h"

static uint64_t write_bytes(uint32_t opcode, FILE *stream, const void *data, uint64_t size) {
  struct rpc_port port = rpc_open(opcode);
  if (opcode == RPC_WRITE_TO_STREAM)
    rpc_send_u64(&port, (uint64_t)(uintptr_t)stream);
  rpc_send_n(&port, data, size);
  uint64_t written = rpc_recv_u64(&port);
  rpc_close(&port);
  return written;
}

/* The opcode must be a constant in each branch: lanes of one wave that
 * write to different streams open different ports. */
static uint64_t write_stream(FILE *stream, const void *data, uint64_t size) {
  if (stream == stdout)
    return write_bytes(RPC_WRITE_TO_STDOUT, stream, data, size);
  if (stream == stderr)
    return write_bytes(RPC_WRITE_TO_STDERR, stream, data, size);
  return write_bytes(RPC_WRITE_TO_STREAM, stream, data, size);
}

static int print_packed(uint32_t opcode, FILE *stream, const char *format, const void *args) {
  struct rpc_port port = rpc_open(opcode);
  if (opcode == RPC_PRINTF_TO_STREAM_PACKED)
    rpc_send_u64(&port, (uint64_t)(uintptr_t)stream);
  rpc_send_n(&port, format, strlen(format) + 1);
  uint64_t args_size = rpc_recv_u64(&port);
  rpc_send_n(&port, args, args_size);
  uint32_t printed = 0;
  for (;;) {
    const char *str = 0;
    RPC_RECV(&port, packet, {
      printed = (uint32_t)packet->data[0];
      str = (const char *)(uintptr_t)packet->data[1];
    });
    if (!rpc_ballot(port.mask, str != 0))
      break;
    rpc_send_n(&port, str, str ? strlen(str) + 1 : 0);
  }
  rpc_close(&port);
  return (int)printed;
}

#if defined(__AMDGCN__)

static const void *packed_args(va_list args) {
  const void *ptr;
  __builtin_memcpy(&ptr, &args, sizeof ptr);
  return ptr;
}

#else

/* Host build only: lay the arguments out as AMDGPU passes them (packed, no
 * padding), following the same per-conversion sizes the server assumes. */
#define HOST_ARGS_MAX 1024

static int is_flag(char c) { return c == ' ' || c == '-' || c == '+' || c == '#' || c == '0'; }

static unsigned char *put_bytes(unsigned char *out, unsigned char *end, const void *v, size_t n) {
  if (!out || out + n > end)
    return 0;
  memcpy(out, v, n);
  return out + n;
}

static unsigned char *pack_host_args(const char *f, va_list *ap, unsigned char *out,
                                     unsigned char *end) {
  while (*f) {
    if (*f++ != '%')
      continue;
    while (is_flag(*f))
      ++f;
    if (*f == '*') {
      int w = va_arg(*ap, int);
      out = put_bytes(out, end, &w, 4);
      ++f;
    }
    while (*f >= '0' && *f <= '9')
      ++f;
    if (*f == '.') {
      ++f;
      if (*f == '*') {
        int p = va_arg(*ap, int);
        out = put_bytes(out, end, &p, 4);
        ++f;
      }
      while (*f >= '0' && *f <= '9')
        ++f;
    }
    int wide = 0;
    if (*f == 'l' || *f == 'z' || *f == 'j' || *f == 't' || *f == 'q' || *f == 'L') {
      wide = 1;
      if (f[0] == 'l' && f[1] == 'l')
        ++f;
      ++f;
    } else if (*f == 'h') {
      if (f[1] == 'h')
        ++f;
      ++f;
    }
    switch (*f) {
    case 'c':
    case 'd': case 'i': case 'o': case 'u': case 'x': case 'X': case 'b': case 'B':
      if (wide && *f != 'c') {
        long long v = va_arg(*ap, long long);
        out = put_bytes(out, end, &v, 8);
      } else {
        int v = va_arg(*ap, int);
        out = put_bytes(out, end, &v, 4);
      }
      break;
    case 'f': case 'F': case 'e': case 'E': case 'a': case 'A': case 'g': case 'G': {
      double v = va_arg(*ap, double);
      out = put_bytes(out, end, &v, 8);
      break;
    }
    case 'p': case 's': case 'n': {
      void *v = va_arg(*ap, void *);
      out = put_bytes(out, end, &v, 8);
      break;
    }
    case '\0':
      return out;
    default:
      break;
    }
    ++f;
  }
  return out;
}

#endif

int vfprintf(FILE *restrict stream, const char *restrict format, va_list args) {
#if defined(__AMDGCN__)
  const void *packed = packed_args(args);
#else
  unsigned char buf[HOST_ARGS_MAX];
  va_list copy;
  va_copy(copy, args);
  unsigned char *end = pack_host_args(format, &copy, buf, buf + sizeof buf);
  va_end(copy);
  if (!end)
    return -1;
  const void *packed = buf;
#endif
  if (stream == stdout)
    return print_packed(RPC_PRINTF_TO_STDOUT_PACKED, stream, format, packed);
  if (stream == stderr)
    return print_packed(RPC_PRINTF_TO_STDERR_PACKED, stream, format, packed);
  return print_packed(RPC_PRINTF_TO_STREAM_PACKED, stream, format, packed);
}

int vprintf(const char *restrict format, va_list args) { return vfprintf(stdout, format, args); }

int printf(const char *restrict format, ...) {
  va_list args;
  va_start(args, format);
  int n = vfprintf(stdout, format, args);
  va_end(args);
  return n;
}

int fprintf(FILE *restrict stream, const char *restrict format, ...) {
  va_list args;
  va_start(args, format);
  int n = vfprintf(stream, format, args);
  va_end(args);
  return n;
}

/* WRITE_TO_STDOUT_NEWLINE: the host appends the newline. */
int puts(const char *s) {
  uint64_t n = strlen(s);
  return write_bytes(RPC_WRITE_TO_STDOUT_NEWLINE, stdout, s, n) == n + 1 ? 0 : EOF;
}

int fputs(const char *restrict s, FILE *restrict stream) {
  uint64_t n = strlen(s);
  return write_stream(stream, s, n) == n ? 0 : EOF;
}

size_t fwrite(const void *restrict data, size_t size, size_t count, FILE *restrict stream) {
  if (size == 0 || count == 0)
    return 0;
  return (size_t)(write_stream(stream, data, (uint64_t)size * count) / size);
}

int fputc(int c, FILE *stream) {
  unsigned char byte = (unsigned char)c;
  return write_stream(stream, &byte, 1) == 1 ? byte : EOF;
}

int putc(int c, FILE *stream) { return fputc(c, stream); }

int putchar(int c) { return fputc(c, stdout); }

/* Every write reaches the host before it returns: nothing to flush. */
int fflush(FILE *stream) {
  (void)stream;
  return 0;
}
