//! Explain drill-down: the winning plan as a tree with each node's counters
//! and share of the work, the heaviest node marked, and the raw JSON a key
//! away. Classic (`explainVersion` 1) and slot-based (SBE, 2) output go
//! through the same [`Node`] tree: for SBE the shape comes from
//! `winningPlan.queryPlan` and the counters from the SBE execution tree,
//! grouped by `planNodeId` (the shallowest node of a group gives
//! `nReturned`; `numReads` of scans and seeks sum to documents and keys).

use std::collections::HashMap;

use bson::{Bson, Document};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::course::OpResult;
use crate::course::claims::format_number;
use crate::tui::app::App;
use crate::tui::screens::experiment::variant_report;
use crate::tui::strings as s;

/// One plan stage, flattened in pre-order with its depth.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    pub depth: usize,
    pub stage: String,
    /// Index name or key pattern, when the stage uses one; the foreign
    /// collection of a join; the branch of a `$facet`.
    pub detail: String,
    /// An IXSCAN's `indexBounds`, one `field: bounds` entry per key.
    pub bounds: Vec<String>,
    /// The indexes this stage reads through: an IXSCAN's index, IDHACK's
    /// `_id_`, a join's `indexesUsed`.
    pub indexes: Vec<String>,
    /// An index scan's key pattern, as mongosh prints it.
    pub key_pattern: String,
    /// Whether this stage scans a whole collection (COLLSCAN, or a join
    /// reporting `collectionScans`).
    pub collscan: bool,
    pub n_returned: Option<u64>,
    pub keys_examined: u64,
    pub docs_examined: u64,
    pub millis: Option<f64>,
    /// This node's share of all keys and documents examined, 0..=1.
    pub share: f64,
    pub heaviest: bool,
}

impl Node {
    /// What the heaviest-node rule weighs: keys plus documents examined by
    /// this stage itself (its children's work is theirs).
    pub fn work(&self) -> u64 {
        self.keys_examined + self.docs_examined
    }
}

const CHILD_KEYS: [&str; 5] = [
    "inputStage",
    "outerStage",
    "innerStage",
    "thenStage",
    "elseStage",
];

/// Join stages: a node of their own, with the examined counts of the reads
/// they made (`totalKeysExamined`/`totalDocsExamined` in their entry).
const JOIN_STAGES: [&str; 2] = ["$lookup", "$graphLookup"];

fn num(doc: &Document, key: &str) -> Option<f64> {
    match doc.get(key)? {
        Bson::Int32(v) => Some(f64::from(*v)),
        Bson::Int64(v) => Some(*v as f64),
        Bson::Double(v) => Some(*v),
        _ => None,
    }
}

fn count(doc: &Document, key: &str) -> u64 {
    num(doc, key).unwrap_or(0.0).max(0.0) as u64
}

fn children(doc: &Document) -> Vec<&Document> {
    let mut out = Vec::new();
    for key in CHILD_KEYS {
        if let Ok(child) = doc.get_document(key) {
            out.push(child);
        }
    }
    if let Ok(arr) = doc.get_array("inputStages") {
        out.extend(arr.iter().filter_map(Bson::as_document));
    }
    out
}

fn detail(doc: &Document) -> String {
    if let Ok(name) = doc.get_str("indexName") {
        return name.to_string();
    }
    if let Ok(kp) = doc.get_document("keyPattern") {
        return crate::dialect::print::inspect_doc(kp);
    }
    String::new()
}

/// `field: [1, 1]` per key of an IXSCAN's `indexBounds`, in key order.
fn bounds(doc: &Document) -> Vec<String> {
    let Ok(b) = doc.get_document("indexBounds") else {
        return Vec::new();
    };
    b.iter()
        .map(|(field, v)| {
            let ranges = match v {
                Bson::Array(items) => items
                    .iter()
                    .map(|i| match i {
                        Bson::String(s) => s.clone(),
                        other => crate::dialect::print::inspect(other),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                Bson::String(s) => s.clone(),
                other => crate::dialect::print::inspect(other),
            };
            format!("{field}: {ranges}")
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct SbeCounters {
    depth: usize,
    n_returned: Option<u64>,
    millis: Option<f64>,
    keys: u64,
    docs: u64,
}

fn collect_sbe(doc: &Document, depth: usize, acc: &mut HashMap<i64, SbeCounters>) {
    if depth > 64 {
        return;
    }
    if let Some(id) = num(doc, "planNodeId") {
        let entry = acc.entry(id as i64).or_insert(SbeCounters {
            depth: usize::MAX,
            ..SbeCounters::default()
        });
        if depth < entry.depth {
            entry.depth = depth;
            entry.n_returned = num(doc, "nReturned").map(|v| v as u64);
            entry.millis = num(doc, "executionTimeMillisEstimate");
        }
        let reads = count(doc, "numReads");
        match doc.get_str("stage").unwrap_or("") {
            "scan" | "seek" => entry.docs += reads,
            "ixscan" | "ixseek" | "ixscan_generic" => entry.keys += reads,
            _ => {}
        }
    }
    for child in children(doc) {
        collect_sbe(child, depth + 1, acc);
    }
}

fn walk(
    doc: &Document,
    depth: usize,
    sbe: Option<&HashMap<i64, SbeCounters>>,
    out: &mut Vec<Node>,
) {
    if depth > 64 {
        return;
    }
    let stage = doc.get_str("stage").unwrap_or("?").to_string();
    let mut node = Node {
        depth,
        detail: detail(doc),
        bounds: bounds(doc),
        collscan: stage.eq_ignore_ascii_case("COLLSCAN"),
        ..Node::default()
    };
    if let Ok(name) = doc.get_str("indexName") {
        node.indexes.push(name.to_string());
    }
    if let Ok(kp) = doc.get_document("keyPattern") {
        node.key_pattern = crate::dialect::print::inspect_doc(kp);
    }
    if stage.eq_ignore_ascii_case("IDHACK") && node.indexes.is_empty() {
        // The _id lookup reads the _id index (mongod names no index).
        node.indexes.push("_id_".into());
        if node.detail.is_empty() {
            node.detail = "_id_".into();
        }
    }
    node.stage = stage;
    match sbe.and_then(|m| num(doc, "planNodeId").and_then(|id| m.get(&(id as i64)))) {
        Some(c) => {
            node.n_returned = c.n_returned;
            node.millis = c.millis;
            node.keys_examined = c.keys;
            node.docs_examined = c.docs;
        }
        None => {
            node.n_returned = num(doc, "nReturned").map(|v| v as u64);
            node.millis = num(doc, "executionTimeMillisEstimate");
            node.keys_examined = count(doc, "keysExamined");
            node.docs_examined = count(doc, "docsExamined");
        }
    }
    out.push(node);
    for child in children(doc) {
        walk(child, depth + 1, sbe, out);
    }
}

/// The tree of one query (a find's explain, or a `$cursor` stage's), at
/// `depth`.
fn query_tree(explain: &Document, depth: usize, out: &mut Vec<Node>) {
    let planner = explain.get_document("queryPlanner").ok();
    let winning = planner.and_then(|p| p.get_document("winningPlan").ok());
    let plan = winning.map(|w| w.get_document("queryPlan").unwrap_or(w));
    let exec = explain
        .get_document("executionStats")
        .ok()
        .and_then(|e| e.get_document("executionStages").ok());
    let is_sbe = explain.get_str("explainVersion").is_ok_and(|v| v == "2")
        || winning.is_some_and(|w| w.contains_key("queryPlan"));
    match (is_sbe, plan, exec) {
        (true, Some(plan), exec) => {
            let mut counters = HashMap::new();
            if let Some(exec) = exec {
                collect_sbe(exec, 0, &mut counters);
            }
            walk(plan, depth, Some(&counters), out);
        }
        (false, _, Some(exec)) => walk(exec, depth, None, out),
        (false, Some(plan), None) => walk(plan, depth, None, out),
        _ => {}
    }
}

/// A pipeline's explained stages as a tree: the last stage at `base`, each
/// stage's input one level below it, the `$cursor` query at the bottom; a
/// `$unionWith` sub-pipeline and each `$facet` branch hang under their
/// stage, above its input.
fn stages_tree(stages: &[Bson], base: usize, out: &mut Vec<Node>, guard: usize) {
    if guard > 16 {
        return;
    }
    let docs: Vec<&Document> = stages.iter().filter_map(Bson::as_document).collect();
    for (i, st) in docs.iter().rev().enumerate() {
        let depth = base + i;
        let Some(name) = st.keys().find(|k| k.starts_with('$')).cloned() else {
            continue;
        };
        if name == "$cursor" {
            if let Ok(inner) = st.get_document("$cursor") {
                query_tree(inner, depth, out);
            }
            continue;
        }
        let spec = st.get_document(&name).ok();
        let mut node = Node {
            depth,
            stage: name.clone(),
            n_returned: num(st, "nReturned").map(|v| v as u64),
            millis: num(st, "executionTimeMillisEstimate"),
            docs_examined: count(st, "totalDocsExamined"),
            keys_examined: count(st, "totalKeysExamined"),
            ..Node::default()
        };
        if JOIN_STAGES.contains(&name.as_str()) {
            node.detail = spec
                .and_then(|d| d.get_str("from").ok())
                .map(|f| format!("← {f}"))
                .unwrap_or_default();
            if let Ok(used) = st.get_array("indexesUsed") {
                node.indexes = used
                    .iter()
                    .filter_map(Bson::as_str)
                    .map(str::to_string)
                    .collect();
            }
            node.collscan = count(st, "collectionScans") > 0;
        }
        if name == "$unionWith" {
            node.detail = spec
                .and_then(|d| d.get_str("coll").ok())
                .map(|f| format!("← {f}"))
                .unwrap_or_default();
        }
        out.push(node);
        match (name.as_str(), spec) {
            ("$unionWith", Some(spec)) => match spec.get("pipeline") {
                Some(Bson::Array(sub)) => stages_tree(sub, depth + 1, out, guard + 1),
                Some(Bson::Document(q)) => query_tree(q, depth + 1, out),
                _ => {}
            },
            ("$facet", Some(spec)) => {
                for (branch, sub) in spec {
                    if let Bson::Array(sub) = sub {
                        let before = out.len();
                        stages_tree(sub, depth + 1, out, guard + 1);
                        if let Some(top) = out.get_mut(before) {
                            top.detail = if top.detail.is_empty() {
                                format!("[{branch}]")
                            } else {
                                format!("[{branch}] {}", top.detail)
                            };
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Builds the tree of a find/aggregate explain (classic or SBE).
pub fn build(explain: &Document) -> Vec<Node> {
    let mut nodes = Vec::new();
    match explain.get_array("stages") {
        // Aggregations not fully pushed down: a list of stages, the first a $cursor.
        Ok(stages) => stages_tree(stages, 0, &mut nodes, 0),
        Err(_) => query_tree(explain, 0, &mut nodes),
    }
    finish(&mut nodes);
    nodes
}

/// The heaviest node, by the rule the legend states
/// ([`s::EXPLAIN_RULE`]): the most keys plus documents examined by the
/// node itself; a tie goes to the deeper node, then to the first in plan
/// order. Every non-empty tree has exactly one.
pub fn heaviest(nodes: &[Node]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, n) in nodes.iter().enumerate() {
        best = match best {
            Some(b) if (nodes[b].work(), nodes[b].depth) >= (n.work(), n.depth) => Some(b),
            _ => Some(i),
        };
    }
    best
}

fn finish(nodes: &mut [Node]) {
    let total: u64 = nodes.iter().map(Node::work).sum();
    for n in nodes.iter_mut() {
        n.share = if total == 0 {
            0.0
        } else {
            n.work() as f64 / total as f64
        };
        n.heaviest = false;
    }
    if let Some(i) = heaviest(nodes) {
        nodes[i].heaviest = true;
    }
}

/// What the Operations card says about a read, read off the same tree the
/// explain view draws: the plan from the root down the first inputs, the
/// indexes read (IDHACK reads `_id_`), whether anything scanned a whole
/// collection, and the examined totals (the tree's sums).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanSummary {
    /// `$lookup ← FETCH ← IXSCAN {a: 1}`.
    pub chain: String,
    pub indexes: Vec<String>,
    pub collscan: bool,
    pub keys_examined: u64,
    pub docs_examined: u64,
}

pub fn summary(nodes: &[Node]) -> PlanSummary {
    let mut chain: Vec<String> = Vec::new();
    let mut last: Option<&Node> = None;
    for n in nodes {
        match last {
            None => {}
            Some(l) if n.depth == l.depth + 1 => {}
            Some(_) => break,
        }
        chain.push(n.stage.clone());
        last = Some(n);
    }
    let mut chain = chain.join(" ← ");
    if let Some(l) = last
        && l.stage.eq_ignore_ascii_case("IXSCAN")
        && !l.key_pattern.is_empty()
    {
        chain.push(' ');
        chain.push_str(&l.key_pattern);
    }
    let mut indexes: Vec<String> = Vec::new();
    for i in nodes.iter().flat_map(|n| n.indexes.iter()) {
        if !indexes.contains(i) {
            indexes.push(i.clone());
        }
    }
    PlanSummary {
        chain,
        indexes,
        collscan: nodes.iter().any(|n| n.collscan),
        keys_examined: nodes.iter().map(|n| n.keys_examined).sum(),
        docs_examined: nodes.iter().map(|n| n.docs_examined).sum(),
    }
}

/// The card's index line: the indexes the tree reads, or why there is none.
pub fn index_label(sum: &PlanSummary) -> Option<String> {
    (!sum.indexes.is_empty()).then(|| sum.indexes.join(", "))
}

fn op_of(app: &App, side: usize) -> Option<&OpResult> {
    let exp = app.current_experiment()?;
    let op = exp.operations.get(app.experiment.op)?;
    let variant = exp.variants.get(side)?;
    variant_report(app.current_report()?, variant.id.get_ref())?
        .operations
        .iter()
        .find(|o| o.id == *op.id.get_ref())
}

/// The raw explain of the operation and variant `side`: the very reply the
/// report's figures were read from (kept by the course runner), never a
/// second explain after the workload.
pub fn explain_of(app: &App, side: usize) -> Option<&Document> {
    op_of(app, side)?.read.as_ref()?.explain.as_ref()
}

/// The raw explain of the operation and the variant in focus.
pub fn selected_explain(app: &App) -> Option<&Document> {
    explain_of(app, app.explain.side)
}

pub fn node_count(app: &App) -> usize {
    selected_explain(app).map_or(0, |e| build(e).len())
}

/// Below this width the variants' trees are shown one at a time (`h`/`l`).
pub const SIDE_BY_SIDE_MIN_WIDTH: u16 = 100;
/// Columns narrower than this draw compact node lines.
const FULL_NODE_WIDTH: usize = 44;

/// Whether the trees are drawn side by side at terminal width `width`.
pub fn side_by_side(width: u16, variants: usize) -> bool {
    variants > 1 && width >= SIDE_BY_SIDE_MIN_WIDTH
}

fn millis(m: Option<f64>) -> String {
    m.map_or("–".into(), |m| format!("{m:.0}"))
}

/// A node's counters on one line: returned, keys and docs examined, time.
pub fn figures(n: &Node, compact: bool) -> String {
    let ret = n.n_returned.map_or("–".into(), |v| format_number(v as f64));
    let keys = format_number(n.keys_examined as f64);
    let docs = format_number(n.docs_examined as f64);
    let ms = millis(n.millis);
    let args: [(&str, &dyn std::fmt::Display); 4] =
        [("n", &ret), ("keys", &keys), ("docs", &docs), ("ms", &ms)];
    s::lang().f(
        if compact {
            s::NODE_FIGURES_SHORT
        } else {
            s::NODE_FIGURES
        },
        &args,
    )
}

/// The lines of one node in a column `width` wide: the stage with its index
/// or join target, its share of the work and the heaviest mark; then its
/// counters; then an IXSCAN's bounds, one key a line.
fn node_lines(
    app: &App,
    n: &Node,
    width: usize,
    cursor: bool,
    compact: bool,
) -> Vec<Line<'static>> {
    let t = &app.theme;
    let step = if compact { 1 } else { 2 };
    let indent = " ".repeat((n.depth * step).min(width / 2));
    let arrow = if n.depth > 0 { "└ " } else { "" };
    let mark = if cursor { "▸" } else { " " };
    let head = format!("{mark}{indent}{arrow}");
    let heavy = if n.heaviest {
        if compact {
            " ◀".to_string()
        } else {
            format!(" {}", s::t(s::EXPLAIN_HEAVIEST))
        }
    } else {
        String::new()
    };
    let share = format!(" {:>3.0}%", n.share * 100.0);
    let bar_len = if compact {
        0
    } else {
        (n.share * 8.0).round() as usize
    };
    let bar = if bar_len > 0 {
        format!(" {}", "■".repeat(bar_len))
    } else {
        String::new()
    };
    let mut name = n.stage.clone();
    if !n.detail.is_empty() {
        name.push(' ');
        name.push_str(&n.detail);
    }
    // The name and the mark first; the share's bar, then the share, give
    // way when the column is too narrow for them.
    let used = crate::locale::width(&head) + crate::locale::width(&heavy);
    let name_w = crate::locale::width(&name);
    let bar = if used + name_w + cols_of(&[&share, &bar]) <= width {
        bar
    } else {
        String::new()
    };
    let name_room = width.saturating_sub(used + crate::locale::width(&share));
    let name = crate::locale::fit(&name, name_room.min(name_w));
    let gap = " ".repeat(
        width.saturating_sub(used + crate::locale::width(&name) + cols_of(&[&share, &bar])),
    );
    let stage_w = crate::locale::width(&n.stage).min(name_room);
    let (stage_part, detail_part) = split_at_width(&name, stage_w);
    let stage_style = if n.heaviest { t.bad } else { t.accent };
    let mut first = Line::from(vec![
        Span::styled(head, t.dim),
        Span::styled(stage_part, stage_style),
        Span::styled(detail_part, t.base),
        Span::styled(heavy, t.bad),
        Span::raw(gap),
        Span::styled(share, t.dim),
        Span::styled(bar, if n.heaviest { t.bad } else { t.bar_b }),
    ]);
    if cursor {
        first = first.patch_style(t.selected);
    }
    let sub = format!(" {indent}  ");
    let room = width.saturating_sub(crate::locale::width(&sub));
    let mut text = figures(n, compact);
    if !compact && crate::locale::width(&text) > room {
        text = figures(n, true);
    }
    let mut lines = vec![
        first,
        Line::from(vec![
            Span::raw(sub.clone()),
            Span::styled(
                crate::locale::fit(&text, room).trim_end().to_string(),
                t.base,
            ),
        ]),
    ];
    // Bounds wrap (a cut bound would read as a different range).
    for b in &n.bounds {
        for piece in wrap_cols(b, room.max(8)) {
            lines.push(Line::from(vec![
                Span::raw(sub.clone()),
                Span::styled(piece, t.dim),
            ]));
        }
    }
    lines
}

/// `s` in pieces of at most `cols` display columns, broken after a comma
/// or space when one is near the end of a piece.
fn wrap_cols(s: &str, cols: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while crate::locale::width(rest) > cols {
        let (head, _) = split_at_width(rest, cols);
        // Between ranges first, then after any comma or space.
        let cut = head
            .rfind("], ")
            .map(|i| i + 2)
            .filter(|&i| i > head.len() / 3)
            .or_else(|| {
                head.rfind([' ', ','])
                    .filter(|&i| i + 1 > head.len() / 2)
                    .map(|i| i + 1)
            })
            .unwrap_or(head.len());
        out.push(rest[..cut].trim_end().to_string());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest.to_string());
    }
    out
}

fn cols_of(parts: &[&String]) -> usize {
    parts.iter().map(|p| crate::locale::width(p)).sum()
}

/// `s` split after `cols` display columns.
fn split_at_width(s: &str, cols: usize) -> (String, String) {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > cols {
            return (s[..i].to_string(), s[i..].to_string());
        }
        used += w;
    }
    (s.to_string(), String::new())
}

/// One variant's tree in `area`, scrolled so the cursor's node shows when
/// the column has the focus.
fn render_column(app: &App, frame: &mut Frame, area: Rect, side: usize, focused: bool) {
    let t = &app.theme;
    let exp = app.current_experiment();
    let name = exp
        .and_then(|e| e.variants.get(side))
        .map(|v| v.id.get_ref().clone())
        .unwrap_or_default();
    let title_style = if side == 0 { t.bar_a } else { t.bar_b }.patch(t.strong);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(if focused { t.accent } else { t.border })
        .title(Span::styled(format!(" {name} "), title_style));
    let Some(explain) = explain_of(app, side) else {
        frame.render_widget(
            Paragraph::new(Span::styled(s::t(s::EXPLAIN_NONE), t.dim))
                .wrap(Wrap { trim: false })
                .block(block),
            area,
        );
        return;
    };
    let nodes = build(explain);
    let sum = summary(&nodes);
    let inner = usize::from(area.width.saturating_sub(2));
    let compact = inner < FULL_NODE_WIDTH;
    let total = s::lang().f(
        if compact {
            s::EXPLAIN_TOTALS_SHORT
        } else {
            s::EXPLAIN_TOTALS
        },
        &[
            ("keys", &format_number(sum.keys_examined as f64)),
            ("docs", &format_number(sum.docs_examined as f64)),
        ],
    );
    block = block.title_bottom(Span::styled(
        format!(
            " {} ",
            crate::locale::fit(&total, inner.saturating_sub(2)).trim_end()
        ),
        t.dim,
    ));
    let mut lines = Vec::new();
    let mut cursor_end = 0;
    for (i, n) in nodes.iter().enumerate() {
        let cursor = focused && i == app.explain.node;
        lines.extend(node_lines(app, n, inner, cursor, compact));
        if cursor {
            cursor_end = lines.len();
        }
    }
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let offset = cursor_end.saturating_sub(rows);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((offset.min(u16::MAX as usize) as u16, 0))
            .block(block),
        area,
    );
}

/// The selected node in full (one-at-a-time layout).
fn render_detail(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let nodes = selected_explain(app).map(build).unwrap_or_default();
    let mut info = Vec::new();
    if let Some(n) = nodes.get(app.explain.node) {
        let row = |label: &str, value: String| {
            Line::from(vec![
                Span::styled(crate::locale::pad(label, 14, true), t.dim),
                Span::styled(value, t.strong),
            ])
        };
        info.push(Line::from(Span::styled(n.stage.clone(), t.heading)));
        if !n.detail.is_empty() {
            info.push(row(s::t(s::INDEX), n.detail.clone()));
        }
        info.push(row(
            s::t(s::RETURNED),
            n.n_returned.map_or("–".into(), |v| format_number(v as f64)),
        ));
        info.push(row(
            s::t(s::KEYS_EXAMINED),
            format_number(n.keys_examined as f64),
        ));
        info.push(row(
            s::t(s::DOCS_EXAMINED),
            format_number(n.docs_examined as f64),
        ));
        info.push(row(s::t(s::TIME), millis(n.millis)));
        info.push(row(s::t(s::SHARE), format!("{:.0}%", n.share * 100.0)));
        if !n.bounds.is_empty() {
            info.push(Line::from(Span::styled(s::t(s::INDEX_BOUNDS), t.dim)));
            for b in &n.bounds {
                info.push(Line::from(Span::styled(format!("  {b}"), t.base)));
            }
        }
    }
    frame.render_widget(
        Paragraph::new(info).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.border),
        ),
        area,
    );
}

/// The explain as mongosh prints a document with `printjson` (every
/// entry on its own line, nothing elided).
pub fn raw_text(explain: &Document) -> String {
    crate::dialect::print::inspect_expanded(&Bson::Document(explain.clone()))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let exp = app.current_experiment();
    let variants = exp.map_or(0, |e| e.variants.len());
    let together = side_by_side(area.width, variants) && !app.explain.raw;
    let compact = together && usize::from(area.width) / variants.max(1) < FULL_NODE_WIDTH + 2;
    let mut rule = if compact {
        format!("{} · {}", s::t(s::EXPLAIN_RULE), s::t(s::EXPLAIN_ABBREV))
    } else {
        s::t(s::EXPLAIN_RULE).to_string()
    };
    let stale = app
        .current_lesson()
        .zip(exp)
        .and_then(|(l, e)| app.stale(&l.id, e.id.get_ref()));
    if stale.is_some() {
        rule = format!("{rule} · {}", s::t(s::STALE_LEGEND));
    }
    // The rule is stated whole: on two lines when one is too short.
    let legend_h = (crate::locale::width(&rule) + 1)
        .div_ceil(usize::from(area.width.max(1)).saturating_sub(4).max(1))
        .clamp(1, 3) as u16;
    let [head, body, legend] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(legend_h),
    ])
    .areas(area);
    let mut tabs = vec![Span::styled(
        format!(
            " {} · {} ",
            s::t(s::EXPLAIN_TITLE),
            exp.and_then(|e| e.operations.get(app.experiment.op))
                .map_or("", |o| o.id.get_ref().as_str())
        ),
        t.title,
    )];
    for (i, v) in exp
        .map(|e| e.variants.as_slice())
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        tabs.push(Span::styled(
            format!(" {} ", v.id.get_ref()),
            if i == app.explain.side {
                t.selected
            } else {
                t.dim
            },
        ));
        tabs.push(Span::raw(" "));
    }
    if stale.is_some() {
        tabs.push(Span::styled(format!(" {}", s::t(s::STALE_MARK)), t.warn));
    }
    frame.render_widget(Paragraph::new(Line::from(tabs)), head);
    frame.render_widget(
        Paragraph::new(Span::styled(format!(" {rule}"), t.dim)).wrap(Wrap { trim: true }),
        legend,
    );
    if app.explain.raw {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(t.border);
        let Some(explain) = selected_explain(app) else {
            frame.render_widget(
                Paragraph::new(Span::styled(s::t(s::EXPLAIN_NONE), t.dim)).block(block),
                body,
            );
            return;
        };
        let lines = app.code(&raw_text(explain), "js");
        let name = exp
            .and_then(|e| e.variants.get(app.explain.side))
            .map(|v| v.id.get_ref().as_str())
            .unwrap_or("");
        let title = Span::styled(format!(" {} · {name} ", s::t(s::EXPLAIN_RAW)), t.title);
        frame.render_widget(
            Paragraph::new(lines)
                .scroll((app.explain.scroll.min(u16::MAX as usize) as u16, 0))
                .block(block.title(title)),
            body,
        );
        return;
    }
    if together {
        let cols =
            Layout::horizontal(vec![Constraint::Ratio(1, variants as u32); variants]).split(body);
        for (side, col) in cols.iter().enumerate() {
            render_column(app, frame, *col, side, side == app.explain.side);
        }
        return;
    }
    let [tree_rect, detail_rect] =
        Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(body);
    render_column(app, frame, tree_rect, app.explain.side, true);
    render_detail(app, frame, detail_rect);
}
