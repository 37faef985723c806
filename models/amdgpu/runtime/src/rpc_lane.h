/* Lane primitives the RPC client is written against.
 *
 * On AMDGPU a "lane group" is the wavefront: the lane mask is EXEC, a ballot
 * is a wave-wide compare, a broadcast reads the first active lane. For the
 * host build (DOJO_RPC_HOST, used by the protocol tests) every thread is a
 * group of one lane, so the same client code runs against the same server. */
#ifndef DOJO_RPC_LANE_H
#define DOJO_RPC_LANE_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__AMDGCN__)

static inline uint32_t rpc_num_lanes(void) { return __builtin_amdgcn_wavefrontsize(); }

static inline uint32_t rpc_lane_id(void) {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

static inline uint64_t rpc_lane_mask(void) { return __builtin_amdgcn_read_exec(); }

static inline uint64_t rpc_ballot(uint64_t mask, bool pred) {
  return mask & __builtin_amdgcn_ballot_w64(pred);
}

static inline uint32_t rpc_broadcast_u32(uint64_t mask, uint32_t value) {
  (void)mask;
  return __builtin_amdgcn_readfirstlane(value);
}

static inline void rpc_sync_lanes(uint64_t mask) {
  (void)mask;
  __builtin_amdgcn_wave_barrier();
}

static inline void rpc_sleep_briefly(void) { __builtin_amdgcn_s_sleep(2); }

__attribute__((noreturn)) static inline void rpc_end_program(void) {
  __builtin_amdgcn_endpgm();
}

#elif defined(DOJO_RPC_HOST)

int sched_yield(void);
__attribute__((noreturn)) void pthread_exit(void *value);

static inline uint32_t rpc_num_lanes(void) { return 1; }
static inline uint32_t rpc_lane_id(void) { return 0; }
static inline uint64_t rpc_lane_mask(void) { return 1; }
static inline uint64_t rpc_ballot(uint64_t mask, bool pred) { return pred ? mask & 1 : 0; }
static inline uint32_t rpc_broadcast_u32(uint64_t mask, uint32_t value) {
  (void)mask;
  return value;
}
static inline void rpc_sync_lanes(uint64_t mask) { (void)mask; }
static inline void rpc_sleep_briefly(void) { sched_yield(); }

/* A host "program" is one thread: exit and abort end that thread only. */
__attribute__((noreturn)) static inline void rpc_end_program(void) { pthread_exit(0); }

#else
#error "the simdojo runtime builds for amdgcn, or for the host with DOJO_RPC_HOST"
#endif

/* clang-19 has the scoped loads, stores and read-modify-writes but not the
 * scoped fence; clang-20 and later have all of them. */
#if !__has_builtin(__scoped_atomic_thread_fence)
#if defined(__AMDGCN__)
#define __scoped_atomic_thread_fence(order, scope)                                   \
  __builtin_amdgcn_fence(order, (scope) == __MEMORY_SCOPE_SYSTEM ? "" : "agent")
#else
#define __scoped_atomic_thread_fence(order, scope) __atomic_thread_fence(order)
#endif
#endif

static inline bool rpc_is_first_lane(uint64_t mask) {
  return rpc_lane_id() == (uint32_t)__builtin_ctzll(mask);
}

#endif
