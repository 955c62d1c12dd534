// Loader for the manual-derived fixtures (the `dialect_fixtures` module of
// tests/it/dialect.rs).
//
// Each `*.js` file is a sequence of cases:
//
//     // @case <name>
//     <dialect source, one or more lines>
//     // @expect
//     // <expected rendered output, line by line>
//
// A case without `// @expect` expects no output; an expected line
// `// ERROR <message>` expects evaluation to fail with exactly that message.
// Cases run in file order against one session, so later cases see earlier
// writes. The facts (documents and results) come from the MongoDB manual's
// CRUD, update-operator and aggregation examples; the files are our own.

pub struct Case {
    pub name: String,
    pub src: String,
    pub expect: String,
}

const FILES: &[(&str, &str)] = &[
    ("crud", include_str!("../../dialect/crud.js")),
    ("update", include_str!("../../dialect/update.js")),
    ("aggregation", include_str!("../../dialect/aggregation.js")),
    ("shell", include_str!("../../dialect/shell.js")),
];

/// Cases that cannot pass yet because the engine lacks a feature. Each
/// entry: (case name, reason). The runner fails if a listed case passes, so
/// the list cannot go stale.
pub const KNOWN_FAILING: &[(&str, &str)] = &[];

pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (file, text) in FILES {
        let mut cur: Option<Case> = None;
        let mut in_expect = false;
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("// @case ") {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
                cur = Some(Case {
                    name: format!("{file}/{}", name.trim()),
                    src: String::new(),
                    expect: String::new(),
                });
                in_expect = false;
                continue;
            }
            let Some(c) = cur.as_mut() else { continue };
            if line.trim() == "// @expect" {
                in_expect = true;
                continue;
            }
            if in_expect {
                let l = line
                    .strip_prefix("// ")
                    .or_else(|| line.strip_prefix("//"))
                    .unwrap_or(line);
                if !c.expect.is_empty() {
                    c.expect.push('\n');
                }
                c.expect.push_str(l);
            } else {
                if !c.src.is_empty() {
                    c.src.push('\n');
                }
                c.src.push_str(line);
            }
        }
        if let Some(c) = cur.take() {
            out.push(c);
        }
    }
    for c in &mut out {
        c.src = c.src.trim_end().to_string();
        c.expect = c.expect.trim_end().to_string();
    }
    out
}
