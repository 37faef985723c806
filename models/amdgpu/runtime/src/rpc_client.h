/* The RPC client: the device half of LLVM libc's GPU RPC protocol.
 *
 * The memory layout of struct rpc_client is LLVM's rpc::Client (a
 * Process<false>): the host writes a ready-made image of it into the global
 * __llvm_rpc_client before the first launch. The shared buffer it points to
 * holds, in order, the client inbox[ports], the client outbox[ports], one
 * header per port and ports * lanes 64-byte packets. The client owns a port's
 * packets when its inbox equals its outbox; each side only writes its outbox. */
#ifndef DOJO_RPC_CLIENT_H
#define DOJO_RPC_CLIENT_H

#include <__dojo_config.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_MAX_PORTS 4096u
#define RPC_OPCODE(n) (((uint32_t)'c' << 24) | (uint32_t)(n))

enum rpc_opcode {
  RPC_NOOP = RPC_OPCODE(0),
  RPC_EXIT = RPC_OPCODE(1),
  RPC_WRITE_TO_STDOUT = RPC_OPCODE(2),
  RPC_WRITE_TO_STDERR = RPC_OPCODE(3),
  RPC_WRITE_TO_STREAM = RPC_OPCODE(4),
  RPC_WRITE_TO_STDOUT_NEWLINE = RPC_OPCODE(5),
  RPC_MALLOC = RPC_OPCODE(10),
  RPC_FREE = RPC_OPCODE(11),
  RPC_ABORT = RPC_OPCODE(13),
  RPC_PRINTF_TO_STDOUT_PACKED = RPC_OPCODE(24),
  RPC_PRINTF_TO_STDERR_PACKED = RPC_OPCODE(25),
  RPC_PRINTF_TO_STREAM_PACKED = RPC_OPCODE(26),
};

struct rpc_buffer {
  uint64_t data[8];
};

struct rpc_header {
  uint64_t mask;
  uint32_t opcode;
};

struct rpc_client {
  uint32_t port_count;
  const uint32_t *inbox;
  uint32_t *outbox;
  struct rpc_header *header;
  struct rpc_buffer *packet;
  uint32_t lock[RPC_MAX_PORTS / 32];
};

_Static_assert(sizeof(struct rpc_buffer) == 64, "packet is 64 bytes");
_Static_assert(sizeof(struct rpc_header) == 16, "header is 16 bytes");
_Static_assert(sizeof(struct rpc_client) == 552, "rpc::Client is 552 bytes");

/* One opened port, private to the lanes that opened it. */
struct rpc_port {
  struct rpc_client *client;
  uint64_t mask;
  uint32_t lane_size;
  uint32_t index;
  uint32_t out;
  bool receive;
  bool owns_buffer;
};

/* Every declaration carries the visibility: LTO keeps the most restrictive
 * one it sees, and a hidden declaration would make the symbol local. */
extern DOJO_EXPORT struct rpc_client __llvm_rpc_client;

#include "rpc_port.h"

#endif
