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
    /// Index name or key pattern, when the stage uses one.
    pub detail: String,
    pub n_returned: Option<u64>,
    pub keys_examined: u64,
    pub docs_examined: u64,
    pub millis: Option<f64>,
    /// This node's share of all keys and documents examined, 0..=1.
    pub share: f64,
    pub heaviest: bool,
}

const CHILD_KEYS: [&str; 5] = [
    "inputStage",
    "outerStage",
    "innerStage",
    "thenStage",
    "elseStage",
];

fn num(doc: &Document, key: &str) -> Option<f64> {
    match doc.get(key)? {
        Bson::Int32(v) => Some(f64::from(*v)),
        Bson::Int64(v) => Some(*v as f64),
        Bson::Double(v) => Some(*v),
        _ => None,
    }
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

#[derive(Default, Clone, Copy)]
struct SbeCounters {
    depth: usize,
    n_returned: Option<u64>,
    millis: Option<f64>,
    keys: u64,
    docs: u64,
}

fn collect_sbe(doc: &Document, depth: usize, acc: &mut HashMap<i64, SbeCounters>) {
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
        let reads = num(doc, "numReads").unwrap_or(0.0) as u64;
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
    let mut node = Node {
        depth,
        stage: doc.get_str("stage").unwrap_or("?").to_string(),
        detail: detail(doc),
        ..Node::default()
    };
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
            node.keys_examined = num(doc, "keysExamined").unwrap_or(0.0) as u64;
            node.docs_examined = num(doc, "docsExamined").unwrap_or(0.0) as u64;
        }
    }
    out.push(node);
    for child in children(doc) {
        walk(child, depth + 1, sbe, out);
    }
}

/// Builds the tree of a find/aggregate explain (classic or SBE).
pub fn build(explain: &Document) -> Vec<Node> {
    let mut nodes = Vec::new();
    // Aggregations not fully pushed down: a list of stages, the first a $cursor.
    if let Ok(stages) = explain.get_array("stages") {
        let docs: Vec<&Document> = stages.iter().filter_map(Bson::as_document).collect();
        for (depth, st) in docs.iter().rev().enumerate() {
            let name = st
                .keys()
                .find(|k| k.starts_with('$'))
                .cloned()
                .unwrap_or_default();
            if name == "$cursor" {
                if let Ok(inner) = st.get_document("$cursor") {
                    let before = nodes.len();
                    nodes.extend(build(inner));
                    for n in &mut nodes[before..] {
                        n.depth += depth;
                    }
                }
            } else {
                nodes.push(Node {
                    depth,
                    stage: name,
                    n_returned: num(st, "nReturned").map(|v| v as u64),
                    millis: num(st, "executionTimeMillisEstimate"),
                    docs_examined: num(st, "totalDocsExamined").unwrap_or(0.0) as u64,
                    keys_examined: num(st, "totalKeysExamined").unwrap_or(0.0) as u64,
                    ..Node::default()
                });
            }
        }
        finish(&mut nodes);
        return nodes;
    }
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
            walk(plan, 0, Some(&counters), &mut nodes);
        }
        (false, _, Some(exec)) => walk(exec, 0, None, &mut nodes),
        (false, Some(plan), None) => walk(plan, 0, None, &mut nodes),
        _ => {}
    }
    finish(&mut nodes);
    nodes
}

fn finish(nodes: &mut [Node]) {
    let total: u64 = nodes
        .iter()
        .map(|n| n.keys_examined + n.docs_examined)
        .sum();
    if total == 0 {
        return;
    }
    let mut heaviest = 0;
    let mut best = 0;
    for (i, n) in nodes.iter_mut().enumerate() {
        let work = n.keys_examined + n.docs_examined;
        n.share = work as f64 / total as f64;
        if work > best {
            best = work;
            heaviest = i;
        }
    }
    nodes[heaviest].heaviest = true;
}

fn selected_op(app: &App) -> Option<&OpResult> {
    let exp = app.current_experiment()?;
    let op = exp.operations.get(app.experiment.op)?;
    let variant = exp.variants.get(app.explain.side)?;
    variant_report(app.current_report()?, variant.id.get_ref())?
        .operations
        .iter()
        .find(|o| o.id == *op.id.get_ref())
}

/// The raw explain of the operation and side on screen: the very reply
/// the report's figures were read from (kept by the course runner), never
/// a second explain after the workload.
pub fn selected_explain(app: &App) -> Option<&Document> {
    selected_op(app)?.read.as_ref()?.explain.as_ref()
}

pub fn node_count(app: &App) -> usize {
    selected_explain(app).map_or(0, |e| build(e).len())
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let exp = app.current_experiment();
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
    frame.render_widget(Paragraph::new(Line::from(tabs)), head);
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
    if app.explain.raw {
        let json = crate::tui::screens::experiment::pretty(explain);
        let lines = app.code(&json, "json");
        let title = Span::styled(format!(" {} ", s::t(s::EXPLAIN_RAW)), t.title);
        frame.render_widget(
            Paragraph::new(lines)
                .scroll((app.explain.scroll.min(u16::MAX as usize) as u16, 0))
                .block(block.title(title)),
            body,
        );
        return;
    }
    let nodes = build(explain);
    let [tree_rect, detail_rect] =
        Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(body);
    let rows = usize::from(tree_rect.height.saturating_sub(2)).max(1);
    let offset = app.explain.node.saturating_sub(rows - 1);
    let mut lines = Vec::new();
    for (i, n) in nodes.iter().enumerate().skip(offset).take(rows) {
        let indent = "  ".repeat(n.depth);
        let arrow = if n.depth > 0 { "└ " } else { "" };
        let bar_len = (n.share * 10.0).round() as usize;
        let cursor = if i == app.explain.node { "▸" } else { " " };
        let mut spans = vec![
            Span::styled(format!("{cursor}{indent}{arrow}"), t.dim),
            Span::styled(n.stage.clone(), if n.heaviest { t.bad } else { t.accent }),
            Span::styled(
                if n.detail.is_empty() {
                    String::new()
                } else {
                    format!(" {}", n.detail)
                },
                t.base,
            ),
            Span::styled(format!("  {:>3.0}% ", n.share * 100.0), t.dim),
            Span::styled(
                "■".repeat(bar_len),
                if n.heaviest { t.bad } else { t.bar_b },
            ),
        ];
        if n.heaviest {
            spans.push(Span::styled(
                format!(" {}", s::t(s::EXPLAIN_HEAVIEST)),
                t.bad,
            ));
        }
        let mut line = Line::from(spans);
        if i == app.explain.node {
            line = line.patch_style(t.selected);
        }
        lines.push(line);
    }
    frame.render_widget(
        Paragraph::new(lines).block(
            block
                .clone()
                .title(Span::styled(format!(" {} ", s::t(s::STAGES)), t.title)),
        ),
        tree_rect,
    );
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
        info.push(row(
            s::t(s::TIME),
            n.millis.map_or("–".into(), |m| format!("{m:.0}")),
        ));
        info.push(row("share", format!("{:.0}%", n.share * 100.0)));
    }
    frame.render_widget(
        Paragraph::new(info).wrap(Wrap { trim: false }).block(block),
        detail_rect,
    );
}
