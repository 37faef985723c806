//! Periodic synchronisation hooks: every partitioning stops at each multiple of the
//! hook's period, and the hook runs there before any later event.

use std::sync::{Arc, Mutex};

use simdojo::component::{BuildContext, Component, Event};
use simdojo::engine::sync::SyncHook;
use simdojo::engine::{Context, Simulation};
use simdojo::params::{ParamKind, ParamValue, Params};
use simdojo::registry::{ComponentType, ParamSpec};
use simdojo::time::Tick;
use simdojo::topology::Topology;

use crate::support::{assignments, fixed};

/// The hook's period.
const Q: Tick = Tick(1000);

/// Posts made by the posters: pending until the next boundary, then visible.
#[derive(Default)]
struct Board {
    pending: Mutex<Vec<(u64, u64)>>,
    visible: Mutex<Vec<(u64, u64)>>,
    /// Per event: (time, poster, posts visible to it).
    history: Mutex<Vec<(u64, u64, usize)>>,
}

struct BoardHook(Arc<Board>);

impl SyncHook for BoardHook {
    fn period(&self) -> Result<Option<Tick>, String> {
        Ok(Some(Q))
    }

    fn pending(&self) -> bool {
        !self.0.pending.lock().unwrap().is_empty()
    }

    fn boundary(&self, _share: usize, _shares: usize) {
        let mut moved = std::mem::take(&mut *self.0.pending.lock().unwrap());
        self.0.visible.lock().unwrap().append(&mut moved);
    }
}

/// Posts to the board every `every` until `until`, noting how many posts it sees.
struct Poster {
    board: Arc<Board>,
    every: Tick,
    until: Tick,
}

impl Component for Poster {
    fn startup(&mut self, ctx: &mut Context<'_>) {
        ctx.schedule(self.every, 0);
    }

    fn handle(&mut self, _event: Event, ctx: &mut Context<'_>) {
        let (now, me) = (ctx.now().0, ctx.id().0 as u64);
        let seen = self.board.visible.lock().unwrap().len();
        self.board.history.lock().unwrap().push((now, me, seen));
        self.board.pending.lock().unwrap().push((now, me));
        if ctx.now() < self.until {
            ctx.schedule(self.every, 0);
        }
    }
}

simdojo::register_component!(ComponentType {
    name: "test.poster",
    doc: "Posts to a board synchronised at multiples of 1000 ps.",
    params: &[
        ParamSpec { name: "every", kind: ParamKind::Duration, default: Some("300"), doc: "post interval" },
        ParamSpec { name: "hook", kind: ParamKind::Bool, default: Some("false"), doc: "registers the board's hook" },
    ],
    ports: &[],
    stats: &[],
    build: |ctx: &mut BuildContext<'_>| {
        let board = ctx.resource("board", Board::default);
        if ctx.params().bool("hook")? {
            ctx.sync_hook(Arc::new(BoardHook(board.clone())));
        }
        Ok(Box::new(Poster { board, every: ctx.params().duration("every")?, until: Tick(20_000) }))
    },
});

#[test]
fn every_partitioning_reaches_each_boundary_and_runs_the_hook_before_later_events() {
    let n = 6;
    let mut t = Topology::new();
    for i in 0..n {
        let mut p = Params::new();
        p.set("every", ParamValue::Duration(Tick(300 + 70 * i as u64)));
        p.set("hook", ParamValue::Bool(i == 0));
        t.add_component(format!("poster[{i}]"), "test.poster", p);
    }
    let mut histories = Vec::new();
    for (name, a) in assignments(n) {
        let mut sim = Simulation::build(&t, &fixed(a)).unwrap();
        sim.run();
        let board: Arc<Board> = sim.resource("board").unwrap();
        assert!(board.pending.lock().unwrap().is_empty(), "{name}: the end of the run runs the hook");
        let posts = board.visible.lock().unwrap().clone();
        let mut history = board.history.lock().unwrap().clone();
        assert!(history.len() > 200, "{name}");
        for &(time, poster, seen) in &history {
            // Exactly the posts of earlier windows are visible (none of its own window).
            let want = posts.iter().filter(|&&(at, _)| at / Q.0 < time / Q.0).count();
            assert_eq!(seen, want, "{name}: poster {poster} at {time}");
        }
        history.sort();
        histories.push((name, history));
    }
    assert!(histories.windows(2).all(|w| w[0].1 == w[1].1), "the partitioning changed what the posters saw");
}
