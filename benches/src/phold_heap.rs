//! The sequential binary-heap PHOLD: the ground truth for event counts and
//! digests.
//!
//! One priority queue holds every pending event. Events are handled in
//! `(time, sender LP, sender's send sequence number)` order, which is a total
//! order: each LP numbers its sends (startup sends included) from zero. No
//! engine needs to match this tie order (see the invariant in
//! [`crate::phold_spec`]), but it makes this reference fully specified.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::phold_outcome::PholdOutcome;
use crate::phold_spec::{arrival, LpId, LpState, PholdParams, Send, Ticks};

/// One pending event in the heap. Field order is the tie-break order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    time: Ticks,
    sender: LpId,
    send_seq: u64,
    dest: LpId,
}

/// Runs PHOLD sequentially to `params.end_time` and returns the final state.
///
/// `epochs` in the outcome counts distinct event timestamps, the quantity a
/// time-stepped engine such as nexosim needs one `step` for.
pub fn run_heap(params: &PholdParams) -> PholdOutcome {
    let mut lps: Vec<LpState> = params
        .lp_ids()
        .map(|id| LpState::new(id, params.seed))
        .collect();
    let mut send_seqs = vec![0u64; lps.len()];
    let mut heap = BinaryHeap::with_capacity(lps.len() * params.events_per_lp as usize);
    let mut push =
        |heap: &mut BinaryHeap<Reverse<Pending>>, sender: LpId, now: Ticks, send: Send| {
            let seq = &mut send_seqs[sender.index()];
            let send_seq = *seq;
            *seq += 1;
            if let Some(time) = arrival(now, send, params.end_time) {
                heap.push(Reverse(Pending {
                    time,
                    sender,
                    send_seq,
                    dest: send.dest,
                }));
            }
        };
    for lp in &mut lps {
        for _ in 0..params.events_per_lp {
            let send = lp.generate(params);
            push(&mut heap, lp.id(), Ticks(0), send);
        }
    }
    let mut time_slices = 0u64;
    let mut last_time = None;
    while let Some(Reverse(event)) = heap.pop() {
        if last_time != Some(event.time) {
            time_slices += 1;
            last_time = Some(event.time);
        }
        let lp = &mut lps[event.dest.index()];
        let send = lp.handle(event.time, params);
        push(&mut heap, event.dest, event.time, send);
    }
    PholdOutcome {
        lps,
        epochs: Some(time_slices),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phold_spec::{mix64, PholdRequest};

    fn params(lps: u64, events_per_lp: u64, end_time_ns: f64) -> PholdParams {
        PholdParams::new(&PholdRequest {
            lps,
            events_per_lp,
            remote: 0.25,
            lookahead_ns: 1.0,
            mean_ns: 1.0,
            end_time_ns,
            seed: 1,
        })
        .expect("valid test parameters")
    }

    #[test]
    fn single_lp_matches_hand_written_loop() {
        // With one LP and one event there is no queue: follow the chain.
        let p = params(1, 1, 50.0);
        let mut lp = LpState::new(LpId(0), 1);
        let mut now = Ticks(0);
        let mut next = lp.generate(&p);
        while let Some(at) = arrival(now, next, p.end_time) {
            now = at;
            next = lp.handle(now, &p);
        }
        let outcome = run_heap(&p);
        assert!(lp.count() > 10, "chain too short: {}", lp.count());
        assert_eq!(outcome.lps, vec![lp.clone()]);
        assert_eq!(outcome.digest(), mix64(lp.hash() ^ (lp.count() << 1)));
        assert_eq!(outcome.epochs, Some(lp.count()));
    }

    #[test]
    fn event_count_is_close_to_the_analytic_rate() {
        // Every LP-event chain advances by about lookahead + mean = 2 ns.
        let p = params(64, 4, 200.0);
        let outcome = run_heap(&p);
        let expected = 64.0 * 4.0 * 200.0 / 2.0;
        let events = outcome.events() as f64;
        assert!(
            (events - expected).abs() < expected * 0.03,
            "{events} vs {expected}"
        );
        assert!(outcome.epochs.is_some_and(|e| e <= outcome.events()));
    }

    #[test]
    fn runs_are_deterministic_and_seed_sensitive() {
        let p = params(32, 2, 100.0);
        let a = run_heap(&p);
        let b = run_heap(&p);
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.events(), b.events());
        let c = run_heap(&PholdParams { seed: 2, ..p });
        assert_ne!(a.digest(), c.digest());
    }

    #[test]
    fn zero_end_time_handles_nothing() {
        let outcome = run_heap(&params(8, 4, 0.0));
        assert_eq!(outcome.events(), 0);
        assert_eq!(outcome.epochs, Some(0));
    }
}
