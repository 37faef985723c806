/* <stdlib.h>: host-served allocation and the pure conversion helpers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_client.h"

/* MALLOC: each lane sends its size, the host answers a device address (0 on
 * failure). */
void *malloc(size_t size) {
  struct rpc_port port = rpc_open(RPC_MALLOC);
  rpc_send_u64(&port, size);
  uint64_t addr = rpc_recv_u64(&port);
  rpc_close(&port);
  return (void *)(uintptr_t)addr;
}

void *calloc(size_t count, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(count, size, &total))
    return 0;
  void *p = malloc(total);
  if (p)
    memset(p, 0, total);
  return p;
}

/* FREE: a single send, no answer. Lanes freeing NULL send 0, which the host
 * ignores. */
void free(void *ptr) {
  struct rpc_port port = rpc_open(RPC_FREE);
  rpc_send_u64(&port, (uint64_t)(uintptr_t)ptr);
  rpc_close(&port);
}

static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int digit_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z')
    return c - 'A' + 10;
  return 99;
}

/* Parses an optionally signed integer; returns the magnitude, sets *neg. */
static unsigned long long parse_integer(const char *s, char **end, int base, int *neg) {
  const char *p = s;
  while (is_space(*p))
    ++p;
  *neg = 0;
  if (*p == '+' || *p == '-')
    *neg = *p++ == '-';
  if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
      digit_value(p[2]) < 16) {
    p += 2;
    base = 16;
  } else if (base == 0) {
    base = p[0] == '0' ? 8 : 10;
  }
  unsigned long long value = 0;
  const char *digits = p;
  while (base >= 2 && base <= 36 && digit_value(*p) < base) {
    value = value * (unsigned)base + (unsigned)digit_value(*p);
    ++p;
  }
  if (end)
    *end = (char *)(p == digits ? s : p);
  return value;
}

long strtol(const char *restrict s, char **restrict end, int base) {
  int neg;
  unsigned long long v = parse_integer(s, end, base, &neg);
  return neg ? -(long)v : (long)v;
}

unsigned long strtoul(const char *restrict s, char **restrict end, int base) {
  int neg;
  unsigned long long v = parse_integer(s, end, base, &neg);
  return neg ? -(unsigned long)v : (unsigned long)v;
}

int atoi(const char *s) { return (int)strtol(s, 0, 10); }
long atol(const char *s) { return strtol(s, 0, 10); }
long long atoll(const char *s) { return strtol(s, 0, 10); }
int abs(int x) { return x < 0 ? -x : x; }
long labs(long x) { return x < 0 ? -x : x; }
long long llabs(long long x) { return x < 0 ? -x : x; }
