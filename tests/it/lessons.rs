//! The real course: every lesson in `lessons/` lints clean (so every setup
//! file and statement parses in the mongosh dialect, every claim parses and
//! every dataset exists); every lesson's experiments run on the embedded
//! engine at the tiny and the default scale with no variant failing (no
//! load, setup, measure or unexpected operation error) and every claim
//! holding; the claims can fail: evaluated against mutated reports
//! (variants' figures swapped, figures emptied, one variant's doubled) most
//! of them do; every lesson shows a trade-off: some row where a design
//! it does not recommend wins or ties; and every lesson declares a workload
//! or scale where its trade-off reverses (`[experiments.reversal]`), under
//! which the design it recommends loses the named row.

use std::time::Instant;

use schemalab::locale::Lang;

use crate::support::root;
use schemalab::course::runner::ExperimentMetrics;
use schemalab::course::{
    self, CancelFlag, CatalogLoader, Check, LessonReport, RunOptions, Scale, VariantReport,
};

#[test]
fn content_lints_clean() {
    let errors = course::lint(root());
    assert!(
        errors.is_empty(),
        "lint found problems:\n{}",
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Run every lesson at `scale`; return the reports.
fn run_course(scale: Scale) -> Vec<LessonReport> {
    let lessons = course::list_lessons(root(), Lang::En).unwrap();
    assert!(
        lessons.len() >= 18,
        "the course has {} lessons",
        lessons.len()
    );
    let ids: Vec<String> = lessons.iter().map(|l| l.id.clone()).collect();
    run_lessons(&ids, scale)
}

/// Run the lessons `ids` at `scale` on one embedded server; return the
/// reports.
fn run_lessons(ids: &[String], scale: Scale) -> Vec<LessonReport> {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = runtime.block_on(crate::support::client(&server.uri()));
    let loader = CatalogLoader::for_course(root()).unwrap();
    let mut reports = Vec::new();
    for id in ids {
        let opts = RunOptions {
            names: Default::default(),
            scale,
            loader: &loader,
            cancel: CancelFlag::new(),
            progress: None,
        };
        let started = Instant::now();
        let report = runtime
            .block_on(course::run_by_id(root(), id, &client, &opts, Lang::En))
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        println!(
            "{} at {} scale: {:.1} s",
            id,
            scale.as_str(),
            started.elapsed().as_secs_f64()
        );
        reports.push(report);
    }
    reports
}

/// Every variant ran (no load, setup, measure or unexpected operation
/// error) and every claim holds.
fn assert_course_holds(reports: &[LessonReport]) -> usize {
    let mut failures = Vec::new();
    let mut checked = 0;
    for report in reports {
        assert!(
            !report.experiments.is_empty(),
            "{} has no experiment",
            report.lesson
        );
        for experiment in &report.experiments {
            assert!(
                !experiment.claims.is_empty(),
                "{}/{} makes no claim",
                report.lesson,
                experiment.id
            );
            for v in &experiment.variants {
                for (what, e) in [
                    ("load", &v.load_error),
                    ("setup", &v.setup_error),
                    ("measure", &v.measure_error),
                ] {
                    if let Some(e) = e {
                        failures.push(format!(
                            "{}/{}/{}: {what} error: {e}",
                            report.lesson, experiment.id, v.id
                        ));
                    }
                }
                for o in &v.operations {
                    if let Some(e) = &o.error
                        && !o.expected_error
                    {
                        failures.push(format!(
                            "{}/{}/{}: operation {} failed: {} {}",
                            report.lesson, experiment.id, v.id, o.id, e.code_name, e.message
                        ));
                    }
                }
                if let Some(f) = &v.failure {
                    failures.push(format!(
                        "{}/{}/{}: failed: {f}",
                        report.lesson, experiment.id, v.id
                    ));
                }
            }
            for claim in &experiment.claims {
                checked += 1;
                if !claim.verdict.passed {
                    failures.push(format!(
                        "{}/{}: {} [{}] → {}",
                        report.lesson, experiment.id, claim.text, claim.check, claim.verdict.reason
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "the course does not hold:\n{}",
        failures.join("\n")
    );
    checked
}

/// Variant `i` gets the figures of variant `i + 1` (operations by id,
/// collections by name, else by position), keeping its own id.
fn rotated(variants: &[VariantReport]) -> Vec<VariantReport> {
    let n = variants.len();
    (0..n)
        .map(|i| {
            let mine = &variants[i];
            let other = &variants[(i + 1) % n];
            let mut v = mine.clone();
            for op in &mut v.operations {
                if let Some(o) = other.operations.iter().find(|o| o.id == op.id) {
                    let id = op.id.clone();
                    *op = o.clone();
                    op.id = id;
                }
            }
            for (k, c) in v.collections.iter_mut().enumerate() {
                let src = other
                    .collections
                    .iter()
                    .find(|x| x.name == c.name)
                    .or_else(|| other.collections.get(k))
                    .or_else(|| other.collections.first());
                if let Some(src) = src {
                    let name = c.name.clone();
                    let indexes = c.indexes.clone();
                    *c = src.clone();
                    c.name = name;
                    // Keep index names resolvable; take the other's sizes in order.
                    c.indexes = indexes
                        .into_iter()
                        .enumerate()
                        .map(|(j, mut ix)| {
                            ix.size = src.indexes.get(j).map_or(0, |x| x.size);
                            ix
                        })
                        .collect();
                }
            }
            v
        })
        .collect()
}

/// Every figure zero, as if the collections were empty and nothing was
/// examined, returned or written.
fn emptied(variants: &[VariantReport]) -> Vec<VariantReport> {
    let mut vs = variants.to_vec();
    for v in &mut vs {
        for c in &mut v.collections {
            c.count = 0;
            c.size = 0;
            c.avg_obj_size = 0.0;
            c.max_obj_size = 0;
            c.storage_size = 0;
            c.total_index_size = 0;
            for ix in &mut c.indexes {
                ix.size = 0;
            }
        }
        for o in &mut v.operations {
            o.millis = o.millis.map(|_| 0.0);
            if let Some(r) = &mut o.read {
                r.n_returned = 0;
                r.keys_examined = 0;
                r.docs_examined = 0;
                r.ratio = 0.0;
                r.bytes_returned = r.bytes_returned.map(|_| 0);
            }
            if let Some(w) = &mut o.write {
                w.n = 0;
                w.n_modified = 0;
                w.n_upserted = 0;
                w.keys_inserted = w.keys_inserted.map(|_| 0);
                w.keys_deleted = w.keys_deleted.map(|_| 0);
            }
        }
    }
    vs
}

/// Variant `k`'s figures doubled, the others' kept: a claim that one design
/// ties or beats another ("examines no more documents than") holds on
/// swapped and on emptied figures alike, but fails once one side costs
/// twice as much.
fn doubled(variants: &[VariantReport], k: usize) -> Vec<VariantReport> {
    let mut vs = variants.to_vec();
    let Some(v) = vs.get_mut(k) else {
        return vs;
    };
    for c in &mut v.collections {
        c.count *= 2;
        c.size *= 2;
        c.avg_obj_size *= 2.0;
        c.max_obj_size *= 2;
        c.storage_size *= 2;
        c.total_index_size *= 2;
        for ix in &mut c.indexes {
            ix.size *= 2;
        }
    }
    for o in &mut v.operations {
        o.millis = o.millis.map(|m| m * 2.0);
        if let Some(r) = &mut o.read {
            r.n_returned *= 2;
            r.keys_examined *= 2;
            r.docs_examined *= 2;
            r.bytes_returned = r.bytes_returned.map(|b| b * 2);
        }
        if let Some(w) = &mut o.write {
            w.n *= 2;
            w.n_modified *= 2;
            w.n_upserted *= 2;
            w.keys_inserted = w.keys_inserted.map(|k| k * 2);
            w.keys_deleted = w.keys_deleted.map(|k| k * 2);
        }
    }
    vs
}

/// Whether a check fails *on numbers* (both sides computed) against these
/// figures: a claim that only fails because a metric went missing proves
/// nothing.
fn fails_on(check: &Check, variants: &[VariantReport]) -> bool {
    let v = check.evaluate(&ExperimentMetrics { variants });
    !v.passed && v.left.is_some() && v.right.is_some()
}

/// Claims that can fail: each is evaluated against the other variant's
/// figures, against an emptied report and against each variant's figures
/// doubled in turn; most must fail on at least one,
/// and every claim fails once the variants it reads are marked failed.
fn assert_claims_can_fail(reports: &[LessonReport]) {
    let mut total = 0;
    let mut can_fail = 0;
    let mut cannot = Vec::new();
    for report in reports {
        for exp in &report.experiments {
            let swapped = rotated(&exp.variants);
            let empty = emptied(&exp.variants);
            let mut failed = exp.variants.clone();
            for v in &mut failed {
                v.failure = Some(schemalab::locale::Message::verbatim(
                    "setup failed: deliberately broken",
                ));
            }
            for claim in &exp.claims {
                total += 1;
                let check = Check::parse(&claim.check).unwrap();
                let verdict = check.evaluate(&ExperimentMetrics { variants: &failed });
                assert!(
                    !verdict.passed && verdict.reason.to_string().contains("failed"),
                    "{}/{}: a claim passed against failed variants: {}",
                    report.lesson,
                    exp.id,
                    claim.check
                );
                if fails_on(&check, &swapped)
                    || fails_on(&check, &empty)
                    || (0..exp.variants.len()).any(|k| fails_on(&check, &doubled(&exp.variants, k)))
                {
                    can_fail += 1;
                } else {
                    cannot.push(format!(
                        "{}/{}: {} [{}]",
                        report.lesson, exp.id, claim.text, claim.check
                    ));
                }
            }
        }
    }
    println!(
        "{can_fail} of {total} claims fail against swapped, emptied or one-side-doubled figures; these cannot:\n{}",
        cannot.join("\n")
    );
    assert!(
        can_fail * 10 >= total * 9,
        "only {can_fail} of {total} claims can fail; these hold whatever the figures:\n{}",
        cannot.join("\n")
    );
}

/// The cost rows of a variant that can be compared across variants, by
/// name: per operation, the documents and keys a read examined and the
/// bytes it returned, the documents a write touched and the index keys it
/// inserted; per variant, the data and index bytes of all its collections.
/// Times are left out (single samples; the measurement path owns them).
fn cost_rows(v: &VariantReport) -> Vec<(String, i64)> {
    let mut rows = Vec::new();
    for o in &v.operations {
        if o.error.is_some() {
            continue;
        }
        if let Some(r) = &o.read {
            rows.push((format!("op {} docs examined", o.id), r.docs_examined));
            rows.push((format!("op {} keys examined", o.id), r.keys_examined));
            if let Some(b) = r.bytes_returned {
                rows.push((format!("op {} bytes returned", o.id), b));
            }
        }
        if let Some(w) = &o.write {
            rows.push((format!("op {} documents written", o.id), w.n));
            if let Some(k) = w.keys_inserted {
                rows.push((format!("op {} keys inserted", o.id), k));
            }
        }
    }
    rows.push((
        "data size".to_string(),
        v.collections.iter().map(|c| c.size).sum(),
    ));
    rows.push((
        "index size".to_string(),
        v.collections.iter().map(|c| c.total_index_size).sum(),
    ));
    rows
}

/// Whether `a` costs no more than `b` on some row both report.
fn wins_or_ties_somewhere(a: &VariantReport, b: &VariantReport) -> Option<String> {
    let theirs = cost_rows(b);
    cost_rows(a).into_iter().find_map(|(row, mine)| {
        theirs
            .iter()
            .find(|(r, _)| *r == row)
            .filter(|(_, other)| mine <= *other)
            .map(|(_, other)| format!("{row}: {} {mine} <= {} {other}", a.id, b.id))
    })
}

/// The honest trade-off: in every lesson some row shows a design the lesson
/// does not recommend winning or tying against the one it recommends (in
/// an experiment without a recommendation, each of two designs wins or
/// ties somewhere), so no lesson's figures read as a clean sweep.
fn assert_every_lesson_shows_a_trade_off(reports: &[LessonReport]) {
    let mut sweeps = Vec::new();
    for report in reports {
        let mut found = None;
        for exp in &report.experiments {
            let ran: Vec<&VariantReport> = exp
                .variants
                .iter()
                .filter(|v| v.failure.is_none())
                .collect();
            if let Some(rec) = ran.iter().find(|v| v.recommended) {
                found = ran
                    .iter()
                    .filter(|v| !v.recommended)
                    .find_map(|v| wins_or_ties_somewhere(v, rec))
                    .map(|why| format!("{}: {why}", exp.id));
            } else {
                found = ran.iter().enumerate().find_map(|(i, a)| {
                    ran[i + 1..].iter().find_map(|b| {
                        let ab = wins_or_ties_somewhere(a, b)?;
                        let ba = wins_or_ties_somewhere(b, a)?;
                        Some(format!("{}: {ab}; {ba}", exp.id))
                    })
                });
            }
            if found.is_some() {
                break;
            }
        }
        match found {
            Some(why) => println!("{}: trade-off shown ({why})", report.lesson),
            None => sweeps.push(report.lesson.clone()),
        }
    }
    assert!(
        sweeps.is_empty(),
        "in these lessons the recommended design wins every row (no row where another design wins or ties): {}",
        sweeps.join(", ")
    );
}

/// A variant's cost on a reversal's `row` under the workload `pct`
/// (operation id → percent of requests); `None` when a figure it needs is
/// missing (an operation failed, a stage not reported).
fn reversal_cost(v: &VariantReport, row: &str, pct: &[(String, f64)]) -> Option<f64> {
    let read_only = |f: &dyn Fn(&schemalab::course::ReadMetrics) -> Option<f64>| {
        pct.iter()
            .filter(|(_, p)| *p > 0.0)
            .map(|(id, p)| {
                let o = v.operations.iter().find(|o| o.id == *id)?;
                if o.error.is_some() {
                    return None;
                }
                match (&o.read, &o.write) {
                    (Some(r), _) if r.not_reported.is_empty() => f(r).map(|x| x * p),
                    (None, Some(_)) => Some(0.0),
                    _ => None,
                }
            })
            .sum::<Option<f64>>()
    };
    match row {
        "docs_examined" => read_only(&|r| Some(r.docs_examined as f64)),
        "bytes_examined" => read_only(&|r| r.bytes_examined.map(|b| b as f64)),
        "documents" | "keys" => pct
            .iter()
            .filter(|(_, p)| *p > 0.0)
            .map(|(id, p)| {
                let o = v.operations.iter().find(|o| o.id == *id)?;
                if o.error.is_some() {
                    return None;
                }
                let x = match (&o.read, &o.write) {
                    (Some(r), _) if !r.not_reported.is_empty() => None,
                    (Some(r), _) if row == "documents" => Some(r.docs_examined),
                    (Some(r), _) => Some(r.keys_examined),
                    (None, Some(w)) if row == "documents" => Some(w.n),
                    (None, Some(w)) => Some(w.keys_inserted? + w.keys_deleted?),
                    _ => None,
                };
                x.map(|x| x as f64 * p)
            })
            .sum(),
        _ => None,
    }
}

/// Every lesson declares where its trade-off reverses, and there the
/// design it recommends (or the declared `loser`) costs more than the
/// declared `winner` on the named row. A weights reversal re-weighs the
/// figures of `reports` (weights change no measurement); a scale reversal
/// runs the lesson again at that scale. Returns the reversals checked.
fn assert_every_lesson_reverses(reports: &[LessonReport], scale: Scale) -> usize {
    let course = course::Course::load(root(), Lang::En).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for report in reports {
        let lesson = course.lesson(&report.lesson).unwrap();
        let declared: Vec<_> = lesson
            .experiments
            .iter()
            .filter_map(|e| e.reversal.as_ref().map(|r| (e, r)))
            .collect();
        if declared.is_empty() {
            failures.push(format!(
                "{}: no experiment declares [experiments.reversal]",
                report.lesson
            ));
            continue;
        }
        for (exp, rev) in declared {
            checked += 1;
            let at = format!("{}/{}", report.lesson, exp.id.get_ref());
            let rerun;
            let exp_report = match &rev.scale {
                Some(s) if s.parse::<Scale>().ok() != Some(scale) => {
                    let Ok(other) = s.parse::<Scale>() else {
                        failures.push(format!("{at}: reversal scale {s:?} is not a scale"));
                        continue;
                    };
                    rerun = run_lessons(std::slice::from_ref(&report.lesson), other);
                    rerun[0]
                        .experiments
                        .iter()
                        .find(|e| e.id == *exp.id.get_ref())
                }
                _ => report
                    .experiments
                    .iter()
                    .find(|e| e.id == *exp.id.get_ref()),
            };
            let Some(exp_report) = exp_report else {
                failures.push(format!("{at}: the experiment did not run"));
                continue;
            };
            if let Some(bad) = rev
                .weights
                .keys()
                .find(|k| !exp_report.operations.iter().any(|o| o.id == **k))
            {
                failures.push(format!("{at}: reversal weighs {bad:?}, not an operation"));
                continue;
            }
            let total: f64 = rev.weights.values().map(|w| w.max(0.0)).sum();
            let pct: Vec<(String, f64)> = exp_report
                .operations
                .iter()
                .map(|o| {
                    let p = if rev.weights.is_empty() {
                        o.weight_percent
                    } else if total > 0.0 {
                        100.0 * rev.weights.get(&o.id).copied().unwrap_or(0.0).max(0.0) / total
                    } else {
                        0.0
                    };
                    (o.id.clone(), p)
                })
                .collect();
            let loser_id = match &rev.loser {
                Some(l) => Some(l.clone()),
                None => exp_report
                    .variants
                    .iter()
                    .find(|v| v.recommended)
                    .map(|v| v.id.clone()),
            };
            let find = |id: &str| exp_report.variants.iter().find(|v| v.id == id);
            let (Some(loser), Some(winner)) =
                (loser_id.as_deref().and_then(find), find(&rev.winner))
            else {
                failures.push(format!(
                    "{at}: reversal names no recommended or loser variant, or an unknown winner {:?}",
                    rev.winner
                ));
                continue;
            };
            if loser.failure.is_some() || winner.failure.is_some() {
                failures.push(format!("{at}: a variant of the reversal failed"));
                continue;
            }
            let costs = match rev.row.as_str() {
                "documents" | "keys" | "docs_examined" | "bytes_examined" => (
                    reversal_cost(loser, &rev.row, &pct),
                    reversal_cost(winner, &rev.row, &pct),
                ),
                metric => {
                    let value = |v: &str| {
                        let check = Check::parse(&format!("{v}.{metric} == 0")).ok()?;
                        check
                            .evaluate(&ExperimentMetrics {
                                variants: &exp_report.variants,
                            })
                            .left
                            .and_then(|x| match x {
                                schemalab::course::Val::Num(n) => Some(n),
                                _ => None,
                            })
                    };
                    (value(&loser.id), value(&winner.id))
                }
            };
            match costs {
                (Some(l), Some(w)) if l > w => println!(
                    "{at}: reversal holds: {} {l:.0} > {} {w:.0} on {} ({})",
                    loser.id,
                    winner.id,
                    rev.row,
                    rev.scale.as_deref().unwrap_or("reweighed")
                ),
                (Some(l), Some(w)) => failures.push(format!(
                    "{at}: the trade-off does not reverse: {} {l:.0} <= {} {w:.0} on {}",
                    loser.id, winner.id, rev.row
                )),
                _ => failures.push(format!(
                    "{at}: row {:?} cannot be computed for {} and {}",
                    rev.row, loser.id, winner.id
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "reversals that do not hold:\n{}",
        failures.join("\n")
    );
    checked
}

#[test]
fn every_lesson_runs_at_tiny_scale_its_claims_hold_and_can_fail() {
    let reports = run_course(Scale::Tiny);
    let checked = assert_course_holds(&reports);
    println!("{checked} claims checked at tiny scale");
    assert_claims_can_fail(&reports);
    assert_every_lesson_shows_a_trade_off(&reports);
    let reversals = assert_every_lesson_reverses(&reports, Scale::Tiny);
    println!("{reversals} reversals checked at tiny scale");
}

/// The whole course at the default scale: in a debug build this takes tens
/// of minutes (the release run of every lesson takes about six), so it is
/// run on demand: `cargo test --release --test lessons -- --ignored`.
#[test]
#[ignore = "default scale takes tens of minutes in a debug build; run with --release -- --ignored"]
fn every_lesson_runs_at_default_scale_and_its_claims_hold() {
    let started = Instant::now();
    let reports = run_course(Scale::Default);
    let checked = assert_course_holds(&reports);
    println!(
        "{checked} claims checked at default scale in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert_claims_can_fail(&reports);
    assert_every_lesson_shows_a_trade_off(&reports);
    assert_every_lesson_reverses(&reports, Scale::Default);
}

/// The working-set lesson's tight experiment under its own cache, or under
/// `cache` instead, at the tiny scale.
fn working_set_tight(cache: Option<&str>) -> LessonReport {
    let course = course::Course::load(root(), Lang::En).unwrap();
    let mut lesson = course.lesson("working-set").unwrap();
    lesson.experiments.retain(|e| e.id.get_ref() == "tight");
    if let Some(c) = cache {
        let ws = lesson.experiments[0].working_set.as_mut().unwrap();
        ws.cache = toml::Spanned::new(0..0, c.to_string());
    }
    crate::support::run_lesson_tiny(&root(), &lesson)
}

/// Run both ways: under the lesson's cache (a fifth of the data) the
/// embedded design's bytes read per 100 requests jump past three times the
/// subset's, and every claim holds; with the cache set larger than all the
/// data, the same claims fail, because both designs' working sets fit.
#[test]
fn working_set_claims_hold_under_a_tight_cache_and_fail_under_a_roomy_one() {
    let tight = working_set_tight(None);
    let exp = &tight.experiments[0];
    for c in &exp.claims {
        assert!(c.verdict.passed, "{}: {}", c.check, c.verdict.reason);
    }
    let figure = |r: &LessonReport, v: usize| {
        r.experiments[0].variants[v]
            .working_set
            .as_ref()
            .and_then(|w| w.bytes_read_per_100)
            .unwrap()
    };
    assert!(figure(&tight, 0) > 3.0 * figure(&tight, 1));
    let roomy = working_set_tight(Some("400%"));
    let failed: Vec<&str> = roomy.experiments[0]
        .claims
        .iter()
        .filter(|c| !c.verdict.passed)
        .map(|c| c.check.as_str())
        .collect();
    assert!(
        failed.iter().any(|c| c.contains("3 * subset_tight")),
        "under a roomy cache the jump claim must fail; failed: {failed:?}"
    );
    // The subset's steady state barely moves; the embedded design's falls.
    assert!(figure(&roomy, 0) < figure(&tight, 0));
}
