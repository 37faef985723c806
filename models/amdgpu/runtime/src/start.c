/* Program entry kernels and process exit.
 *
 * The loader launches _begin(argc, argv, envp) on one thread, then
 * _start(argc, argv, envp, ret) on the user's grid (every thread runs main),
 * then _end(ret) on one thread, which runs the atexit handlers and sends the
 * EXIT opcode with *ret as the status. */
#include <stdint.h>
#include <stdlib.h>

#include "rpc_client.h"

#define DOJO_KERNEL DOJO_EXPORT __attribute__((amdgpu_kernel))

#define DOJO_ATEXIT_MAX 64

extern int main(int argc, char **argv, char **envp);

char **environ;

static void (*atexit_fns[DOJO_ATEXIT_MAX])(void);
static uint32_t atexit_count;

int atexit(void (*fn)(void)) {
  uint32_t slot =
      __scoped_atomic_fetch_add(&atexit_count, 1u, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  if (slot >= DOJO_ATEXIT_MAX)
    return -1;
  atexit_fns[slot] = fn;
  return 0;
}

static void run_atexit(void) {
  uint32_t n = __scoped_atomic_exchange_n(&atexit_count, 0u, __ATOMIC_ACQUIRE,
                                          __MEMORY_SCOPE_DEVICE);
  if (n > DOJO_ATEXIT_MAX)
    n = DOJO_ATEXIT_MAX;
  while (n > 0)
    atexit_fns[--n]();
}

/* EXIT: an empty handshake, then the status; the host ends the program. */
static __attribute__((noreturn)) void send_exit(uint32_t opcode, int status) {
  struct rpc_port port = rpc_open(opcode);
  RPC_SEND(&port, packet, { (void)packet; });
  RPC_RECV(&port, packet, { (void)packet; });
  RPC_SEND(&port, packet, { packet->data[0] = (uint32_t)status; });
  rpc_close(&port);
  rpc_end_program();
}

void exit(int status) {
  run_atexit();
  send_exit(RPC_EXIT, status);
}

void abort(void) { send_exit(RPC_ABORT, 0); }

#if defined(__AMDGCN__)

DOJO_KERNEL void _begin(int argc, char **argv, char **envp) {
  (void)argc;
  (void)argv;
  environ = envp;
}

DOJO_KERNEL void _start(int argc, char **argv, char **envp, int *ret) {
  int status = main(argc, argv, envp);
  __scoped_atomic_fetch_or(ret, status, __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM);
}

DOJO_KERNEL void _end(int *ret) { exit(*ret); }

#endif
