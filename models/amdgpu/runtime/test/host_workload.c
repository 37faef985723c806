/* Host-side workloads for the RPC protocol tests: the device runtime built
 * for the host (DOJO_RPC_HOST, one lane per thread) calls through the same
 * client code a GPU program uses, against the Rust server. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_EXPORT __attribute__((visibility("default")))

int pthread_create(unsigned long *thread, const void *attr, void *(*fn)(void *), void *arg);
int pthread_join(unsigned long thread, void **value);

/* One formatted line with every kind of argument. */
TEST_EXPORT int workload_printf(int id, int i) {
  return printf("w%d.%d %s|%5.2f|%-6x|%c|%lu|%05d|%e|%g|%p|%%|%s\n", id, i, "str", id * 0.25,
                (unsigned)(id * 4096 + i), 'a' + id % 26, (unsigned long)id * 1000000007ul, -i,
                id * 1e10, 1.0 / (i + 1), (void *)0, i % 2 ? "odd" : "even");
}

/* A message far longer than one packet, through fputs to stderr, then the
 * same text through puts. */
TEST_EXPORT int workload_long(int id, int len) {
  char *buf = malloc((size_t)len + 1);
  if (!buf)
    return -1;
  for (int k = 0; k < len; ++k)
    buf[k] = (char)('A' + (id + k) % 26);
  buf[len] = '\0';
  int a = fputs(buf, stderr);
  int b = puts(buf);
  free(buf);
  return a == 0 && b == 0 ? 0 : -2;
}

/* A long %s argument and a long format in one printf. */
TEST_EXPORT int workload_long_printf(int id) {
  char arg[300];
  for (int k = 0; k < 299; ++k)
    arg[k] = (char)('a' + k % 26);
  arg[299] = '\0';
  return fprintf(stdout,
                 "[%d] 0123456789012345678901234567890123456789012345678901234567890123456789 %s "
                 "%.3s %10.4s|\n",
                 id, arg, "abcdef", "xyz");
}

/* malloc, fill, check, free. Returns the number of bytes that matched. */
TEST_EXPORT long workload_malloc(int id, int size) {
  unsigned char *p = malloc((size_t)size);
  if (!p)
    return -1;
  memset(p, id & 0xff, (size_t)size);
  long ok = 0;
  for (int k = 0; k < size; ++k)
    ok += p[k] == (unsigned char)(id & 0xff);
  char *s = strdup("copied");
  if (!s || strcmp(s, "copied") != 0)
    ok = -2;
  free(s);
  free(p);
  return ok;
}

static void *exit_thread(void *arg) {
  exit((int)(intptr_t)arg);
}

/* Calls exit(code) on a thread of its own (exit ends that thread). */
TEST_EXPORT int workload_exit(int code) {
  unsigned long thread;
  if (pthread_create(&thread, 0, exit_thread, (void *)(intptr_t)code) != 0)
    return -1;
  return pthread_join(thread, 0);
}

TEST_EXPORT int workload_atoi(const char *s) { return atoi(s) + (int)strtol("0x10", 0, 0); }
