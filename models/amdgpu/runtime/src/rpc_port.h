/* Port operations of the RPC client (included by rpc_client.h).
 *
 * Everything is forced inline so that the per-lane packet callbacks become
 * direct code and every lane of a wave runs the same instructions. Mailbox
 * loads are broadcast from the first lane, so every loop that waits on the
 * host is uniform across the wave. */
#ifndef DOJO_RPC_PORT_H
#define DOJO_RPC_PORT_H

#include "rpc_lane.h"

#define RPC_INLINE static inline __attribute__((always_inline))

RPC_INLINE uint32_t rpc_load_mailbox(uint64_t mask, const uint32_t *box, uint32_t index) {
  return rpc_broadcast_u32(
      mask, __scoped_atomic_load_n(&box[index], __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM));
}

/* The client owns the packets when its inbox equals its outbox. */
RPC_INLINE bool rpc_buffer_unavailable(uint32_t in, uint32_t out) { return in != out; }

RPC_INLINE uint32_t rpc_invert_outbox(struct rpc_client *c, uint32_t index, uint32_t out) {
  uint32_t flipped = !out;
  __scoped_atomic_thread_fence(__ATOMIC_RELEASE, __MEMORY_SCOPE_SYSTEM);
  __scoped_atomic_store_n(&c->outbox[index], flipped, __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM);
  return flipped;
}

RPC_INLINE void rpc_wait_for_ownership(struct rpc_client *c, uint64_t mask, uint32_t index,
                                       uint32_t out, uint32_t in) {
  while (rpc_buffer_unavailable(in, out)) {
    rpc_sleep_briefly();
    in = rpc_load_mailbox(mask, c->inbox, index);
  }
  __scoped_atomic_thread_fence(__ATOMIC_ACQUIRE, __MEMORY_SCOPE_SYSTEM);
}

/* Every lane of the mask tries to set the port's lock bit; at most one wins,
 * and the ballot tells the whole group whether one did. */
RPC_INLINE bool rpc_try_lock(struct rpc_client *c, uint64_t mask, uint32_t index) {
  uint32_t id = rpc_lane_id();
  bool in_mask = (mask >> id) & 1;
  uint32_t bit = 1u << (index % 32);
  uint32_t before = __scoped_atomic_fetch_or(&c->lock[index / 32], in_mask ? bit : 0u,
                                             __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE) &
                    bit;
  uint64_t failed = rpc_ballot(mask, before != 0);
  bool holding = failed != mask;
  if (holding)
    __scoped_atomic_thread_fence(__ATOMIC_ACQUIRE, __MEMORY_SCOPE_DEVICE);
  return holding;
}

RPC_INLINE void rpc_unlock(struct rpc_client *c, uint64_t mask, uint32_t index) {
  __scoped_atomic_thread_fence(__ATOMIC_RELEASE, __MEMORY_SCOPE_DEVICE);
  uint32_t bit = rpc_is_first_lane(mask) ? 1u << (index % 32) : 0u;
  __scoped_atomic_fetch_and(&c->lock[index / 32], ~bit, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  rpc_sync_lanes(mask);
}

RPC_INLINE struct rpc_buffer *rpc_lane_packet(struct rpc_port *port) {
  return &port->client->packet[(uint64_t)port->index * port->lane_size + rpc_lane_id()];
}

/* Scans the ports until one is free and in the sending state, forever: with
 * no forward-progress guarantee a port may stay busy for a long time. */
RPC_INLINE struct rpc_port rpc_open(uint32_t opcode) {
  struct rpc_client *c = &__llvm_rpc_client;
  for (uint32_t index = 0;; ++index) {
    if (index >= c->port_count)
      index = 0;
    uint64_t mask = rpc_lane_mask();
    if (!rpc_try_lock(c, mask, index))
      continue;
    uint32_t in = rpc_load_mailbox(mask, c->inbox, index);
    uint32_t out = rpc_load_mailbox(mask, c->outbox, index);
    if (rpc_buffer_unavailable(in, out)) {
      rpc_unlock(c, mask, index);
      continue;
    }
    if (rpc_is_first_lane(mask)) {
      c->header[index].opcode = opcode;
      c->header[index].mask = mask;
    }
    rpc_sync_lanes(mask);
    struct rpc_port port = {c, mask, rpc_num_lanes(), index, out, false, true};
    return port;
  }
}

/* Waits for the packets, lets each lane fill its own, hands them to the host. */
#define RPC_SEND(port, packet, body)                                                   \
  do {                                                                                 \
    struct rpc_port *rpc_p_ = (port);                                                  \
    uint32_t rpc_in_ = rpc_p_->owns_buffer                                             \
                           ? rpc_p_->out                                               \
                           : rpc_load_mailbox(rpc_p_->mask, rpc_p_->client->inbox,     \
                                              rpc_p_->index);                          \
    rpc_wait_for_ownership(rpc_p_->client, rpc_p_->mask, rpc_p_->index, rpc_p_->out,   \
                           rpc_in_);                                                   \
    {                                                                                  \
      struct rpc_buffer *packet = rpc_lane_packet(rpc_p_);                             \
      body;                                                                            \
    }                                                                                  \
    rpc_p_->out = rpc_invert_outbox(rpc_p_->client, rpc_p_->index, rpc_p_->out);       \
    rpc_p_->owns_buffer = false;                                                       \
    rpc_p_->receive = false;                                                           \
  } while (0)

/* Acknowledges a previous receive if there was one, waits for the host's
 * reply and lets each lane read its own packet. */
#define RPC_RECV(port, packet, body)                                                   \
  do {                                                                                 \
    struct rpc_port *rpc_p_ = (port);                                                  \
    if (rpc_p_->receive) {                                                             \
      rpc_p_->out = rpc_invert_outbox(rpc_p_->client, rpc_p_->index, rpc_p_->out);     \
      rpc_p_->owns_buffer = false;                                                     \
    }                                                                                  \
    uint32_t rpc_in_ = rpc_p_->owns_buffer                                             \
                           ? rpc_p_->out                                               \
                           : rpc_load_mailbox(rpc_p_->mask, rpc_p_->client->inbox,     \
                                              rpc_p_->index);                          \
    rpc_wait_for_ownership(rpc_p_->client, rpc_p_->mask, rpc_p_->index, rpc_p_->out,   \
                           rpc_in_);                                                   \
    {                                                                                  \
      struct rpc_buffer *packet = rpc_lane_packet(rpc_p_);                             \
      body;                                                                            \
    }                                                                                  \
    rpc_p_->receive = true;                                                            \
    rpc_p_->owns_buffer = true;                                                        \
  } while (0)

RPC_INLINE void rpc_copy_bytes(void *dst, const void *src, uint64_t n) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  for (uint64_t i = 0; i < n; ++i)
    d[i] = s[i];
}

/* Streams `size` bytes of each lane's `src`: the first packet carries the size
 * and 56 bytes, every later packet 64 bytes, until no lane has data left. */
RPC_INLINE void rpc_send_n(struct rpc_port *port, const void *src, uint64_t size) {
  const uint64_t first = sizeof(((struct rpc_buffer *)0)->data) - sizeof(uint64_t);
  RPC_SEND(port, packet, {
    packet->data[0] = size;
    rpc_copy_bytes(&packet->data[1], src, size < first ? size : first);
  });
  uint64_t mask = port->mask;
  for (uint64_t idx = first; rpc_ballot(mask, idx < size); idx += sizeof(struct rpc_buffer)) {
    RPC_SEND(port, packet, {
      if (idx < size) {
        uint64_t left = size - idx;
        rpc_copy_bytes(packet->data, (const unsigned char *)src + idx,
                       left < sizeof(struct rpc_buffer) ? left : sizeof(struct rpc_buffer));
      }
    });
  }
}

RPC_INLINE void rpc_send_u64(struct rpc_port *port, uint64_t value) {
  RPC_SEND(port, packet, { packet->data[0] = value; });
}

RPC_INLINE uint64_t rpc_recv_u64(struct rpc_port *port) {
  uint64_t value = 0;
  RPC_RECV(port, packet, { value = packet->data[0]; });
  return value;
}

/* Waits for every lane, then releases the port's lock. The client never
 * holds the packets when it closes: the host always answers last or the
 * client's last operation was a send. */
RPC_INLINE void rpc_close(struct rpc_port *port) {
  rpc_sync_lanes(port->mask);
  rpc_unlock(port->client, port->mask, port->index);
}

#endif
