//! Stages that shape a stream without reading storage: SKIP, LIMIT and the
//! three PROJECTION stages. Projections pass members through unchanged:
//! the operations apply the projection to the documents they return, and
//! explain only needs the counts.

use bson::{Document, doc};

use super::{BoxStage, Counters, Ctx, Stage, State, stage_doc};
use crate::error::Result;
use crate::planner::ProjectionKind;

/// `SKIP`: drop the first `n` results.
pub struct Skip {
    child: BoxStage,
    n: u64,
    skipped: u64,
    c: Counters,
}

impl Skip {
    pub fn new(child: BoxStage, n: u64) -> Self {
        Skip {
            child,
            n,
            skipped: 0,
            c: Counters::default(),
        }
    }
}

impl Stage for Skip {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let state = match self.child.work(ctx) {
            Ok(State::Advanced(_)) if self.skipped < self.n => {
                self.skipped += 1;
                Ok(State::NeedTime)
            }
            other => other,
        };
        self.c.record(started, &state);
        state
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        stage_doc(
            "SKIP",
            doc! {"skipAmount": self.n as i64},
            stats.then_some(&self.c),
            Document::new(),
            vec![self.child.explain(ctx, stats)],
        )
    }

    fn totals(&self) -> (u64, u64) {
        self.child.totals()
    }

    fn bytes_examined(&self) -> u64 {
        self.child.bytes_examined()
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}

/// `LIMIT`: stop after `n` results.
pub struct Limit {
    child: BoxStage,
    n: u64,
    c: Counters,
}

impl Limit {
    pub fn new(child: BoxStage, n: u64) -> Self {
        Limit {
            child,
            n,
            c: Counters::default(),
        }
    }
}

impl Stage for Limit {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let state = if self.c.advanced >= self.n {
            Ok(State::Eof)
        } else {
            self.child.work(ctx)
        };
        self.c.record(started, &state);
        state
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        stage_doc(
            "LIMIT",
            doc! {"limitAmount": self.n as i64},
            stats.then_some(&self.c),
            Document::new(),
            vec![self.child.explain(ctx, stats)],
        )
    }

    fn totals(&self) -> (u64, u64) {
        self.child.totals()
    }

    fn bytes_examined(&self) -> u64 {
        self.child.bytes_examined()
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}

/// `PROJECTION_SIMPLE` / `_DEFAULT` / `_COVERED`.
pub struct Projection {
    child: BoxStage,
    kind: ProjectionKind,
    spec: Document,
    c: Counters,
}

impl Projection {
    pub fn new(child: BoxStage, kind: ProjectionKind, spec: Document) -> Self {
        Projection {
            child,
            kind,
            spec,
            c: Counters::default(),
        }
    }
}

impl Stage for Projection {
    fn work(&mut self, ctx: &Ctx<'_>) -> Result<State> {
        let started = self.c.start();
        let state = self.child.work(ctx);
        self.c.record(started, &state);
        state
    }

    fn explain(&self, ctx: &Ctx<'_>, stats: bool) -> Document {
        stage_doc(
            self.kind.stage(),
            doc! {"transformBy": self.spec.clone()},
            stats.then_some(&self.c),
            Document::new(),
            vec![self.child.explain(ctx, stats)],
        )
    }

    fn totals(&self) -> (u64, u64) {
        self.child.totals()
    }

    fn bytes_examined(&self) -> u64 {
        self.child.bytes_examined()
    }

    fn counters(&self) -> &Counters {
        &self.c
    }
}
