//! Namespace commands: `listDatabases`, `listCollections`, `create`,
//! `drop`, `dropDatabase`, `renameCollection`, `dbStats`, `collStats`.

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::args;
use super::{CommandDoc, Context};
use schemalab_engine::expr::Vars;
use schemalab_engine::filter::Filter;
use schemalab_engine::{EngineError, ErrorCode, Result};

/// Keep the entries a `filter` matches (`listDatabases`,
/// `listCollections` apply theirs over the listing).
fn filter_entries(
    ctx: &Context<'_>,
    entries: Vec<Document>,
    filter: Option<&Document>,
) -> Result<Vec<Document>> {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else {
        return Ok(entries);
    };
    let filter = Filter::parse(filter, None)?;
    let vars = Vars::with_now(ctx.engine.now());
    let mut kept = Vec::new();
    for entry in entries {
        if filter.matches(&entry, &vars)? {
            kept.push(entry);
        }
    }
    Ok(kept)
}

/// `listDatabases`.
#[derive(Debug, Clone)]
pub struct ListDatabases {
    filter: Option<Document>,
    name_only: bool,
}

impl ListDatabases {
    /// Read `filter` and `nameOnly`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            filter: args::doc(cmd, "listDatabases", "filter")?,
            name_only: args::bool(cmd, "listDatabases", "nameOnly")?.unwrap_or(false),
        })
    }

    /// `{databases, totalSize, totalSizeMb}`, or names only.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let entries = filter_entries(ctx, ctx.engine.list_databases(), self.filter.as_ref())?;
        if self.name_only {
            let names: Vec<Bson> = entries
                .iter()
                .filter_map(|e| e.get("name").cloned())
                .map(|n| Bson::Document(doc! {"name": n}))
                .collect();
            return Ok(doc! {"databases": names});
        }
        let total: i64 = entries
            .iter()
            .filter_map(|e| schemalab_engine::value::as_i64(e.get("sizeOnDisk")?))
            .sum();
        Ok(doc! {
            "databases": entries,
            "totalSize": total,
            "totalSizeMb": total / (1024 * 1024),
            // `sizeOnDisk` comes from the size model: say so.
            "schemalab": schemalab_engine::size_model::provenance(),
        })
    }
}

/// `listCollections`.
#[derive(Debug, Clone)]
pub struct ListCollections {
    filter: Document,
    name_only: bool,
    batch_size: Option<usize>,
}

impl ListCollections {
    /// Read `filter`, `nameOnly` and `cursor`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            filter: args::doc(cmd, "listCollections", "filter")?.unwrap_or_default(),
            name_only: args::bool(cmd, "listCollections", "nameOnly")?.unwrap_or(false),
            batch_size: args::cursor_batch_size(cmd, "listCollections")?,
        })
    }

    /// A cursor over `{name, type, …}` entries.
    pub fn apply(self, ctx: &Context<'_>) -> Result<RawDocumentBuf> {
        let mut entries = Vec::new();
        let db = ctx.db;
        let listed = ctx.engine.list_collections(db, &self.filter)?;
        for entry in listed {
            if self.name_only {
                let mut short = Document::new();
                for key in ["name", "type"] {
                    if let Some(v) = entry.get(key) {
                        short.insert(key, v.clone());
                    }
                }
                entries.push(short);
            } else {
                entries.push(entry);
            }
        }
        ctx.cursors.open(
            ctx.lsid,
            format!("{db}.$cmd.listCollections"),
            entries,
            self.batch_size,
            false,
        )
    }
}

/// `create`.
#[derive(Debug, Clone)]
pub struct Create {
    coll: String,
    options: Document,
}

impl Create {
    /// The name and every non-generic option.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            coll: args::collection(cmd, "create")?,
            options: args::options(cmd),
        })
    }

    /// Create the collection.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        ctx.engine
            .create_collection(ctx.db, &self.coll, &self.options)?;
        Ok(Document::new())
    }
}

/// `collMod`.
#[derive(Debug, Clone)]
pub struct CollMod {
    coll: String,
    /// The command without its generic arguments.
    spec: Document,
}

impl CollMod {
    /// The name and every non-generic field.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            coll: args::collection(cmd, "collMod")?,
            spec: args::options(cmd),
        })
    }

    /// Change the collection; what changed (`hidden_old`, …).
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        ctx.engine.coll_mod(ctx.db, &self.coll, &self.spec)
    }
}

/// `drop`.
#[derive(Debug, Clone)]
pub struct Drop {
    coll: String,
}

impl Drop {
    /// The collection name.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            coll: args::collection(cmd, "drop")?,
        })
    }

    /// `{nIndexesWas, ns}` when it existed; dropping nothing succeeds (7.0).
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let indexes = ctx.engine.list_indexes(ctx.db, &self.coll).map(|l| l.len());
        let existed = ctx.engine.drop_collection(ctx.db, &self.coll)?;
        match (existed, indexes) {
            (true, Ok(n)) => Ok(doc! {
                "nIndexesWas": i32::try_from(n).unwrap_or(i32::MAX),
                "ns": format!("{}.{}", ctx.db, self.coll),
            }),
            (true, Err(_)) => Ok(doc! {"ns": format!("{}.{}", ctx.db, self.coll)}),
            (false, _) => Ok(Document::new()),
        }
    }
}

/// `dropDatabase`.
#[derive(Debug, Clone)]
pub struct DropDatabase;

impl DropDatabase {
    /// Nothing to read.
    pub fn parse(_cmd: &CommandDoc) -> Self {
        Self
    }

    /// Drop the command's database. `admin` cannot be dropped, as on
    /// mongod (`local` can, on a standalone).
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        if ctx.db == "admin" {
            return Err(EngineError::new(
                ErrorCode::ILLEGAL_OPERATION,
                "Dropping the 'admin' database is prohibited.",
            ));
        }
        Ok(if ctx.engine.drop_database(ctx.db) {
            doc! {"dropped": ctx.db}
        } else {
            Document::new()
        })
    }
}

/// `renameCollection` (an admin command over full namespaces).
#[derive(Debug, Clone)]
pub struct RenameCollection {
    from: String,
    to: String,
    drop_target: bool,
}

impl RenameCollection {
    /// Read `renameCollection`, `to`, `dropTarget`; must run on `admin`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        if cmd.db != "admin" {
            return Err(EngineError::new(
                ErrorCode::UNAUTHORIZED,
                "renameCollection may only be run against the admin database.",
            ));
        }
        let from = match cmd.body.get("renameCollection") {
            Some(Bson::String(s)) => s.clone(),
            Some(other) => {
                return Err(args::wrong_type(
                    "renameCollection.renameCollection",
                    other,
                    "'string'",
                ));
            }
            None => return Err(args::missing("renameCollection")),
        };
        let to = args::string(cmd, "renameCollection", "to")?
            .ok_or_else(|| args::missing("renameCollection.to"))?;
        Ok(Self {
            from,
            to,
            drop_target: args::bool(cmd, "renameCollection", "dropTarget")?.unwrap_or(false),
        })
    }

    /// Rename.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        ctx.engine
            .rename_collection(&self.from, &self.to, self.drop_target)?;
        Ok(Document::new())
    }
}

/// `dbStats`.
#[derive(Debug, Clone)]
pub struct DbStats {
    scale: i64,
}

fn scale(cmd: &CommandDoc, command: &str) -> Result<i64> {
    match args::int(cmd, command, "scale")? {
        None => Ok(1),
        Some(s) if s > 0 => Ok(s),
        Some(_) => Err(EngineError::bad_value(
            "Scale factor must be greater than zero",
        )),
    }
}

impl DbStats {
    /// Read `scale`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            scale: scale(cmd, "dbStats")?,
        })
    }

    /// The engine's statistics.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        ctx.engine.db_stats(ctx.db, self.scale)
    }
}

/// `collStats`.
#[derive(Debug, Clone)]
pub struct CollStats {
    coll: String,
    scale: i64,
}

impl CollStats {
    /// Read the collection and `scale`.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        Ok(Self {
            coll: args::collection(cmd, "collStats")?,
            scale: scale(cmd, "collStats")?,
        })
    }

    /// The engine's statistics.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        ctx.engine.coll_stats(ctx.db, &self.coll, self.scale)
    }
}

/// `validate`.
#[derive(Debug, Clone)]
pub struct Validate {
    coll: String,
}

impl Validate {
    /// Read the collection; `full`, `repair`, `metadata`, `background` and
    /// `checkBSONConformance` are accepted (an in-memory engine has nothing
    /// to repair or flush: every check is the full one).
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        args::reject_unknown(
            cmd,
            "validate",
            &[
                "full",
                "repair",
                "metadata",
                "background",
                "checkBSONConformance",
                "enforceFastCount",
                "fixMultikey",
            ],
        )?;
        Ok(Self {
            coll: args::collection(cmd, "validate")?,
        })
    }

    /// mongod's validate report.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        ctx.engine.validate(ctx.db, &self.coll)
    }
}

/// `dataSize`.
#[derive(Debug, Clone)]
pub struct DataSize {
    db: String,
    coll: String,
}

impl DataSize {
    /// Read the full namespace `db.coll`; key ranges are not supported.
    pub fn parse(cmd: &CommandDoc, name: &str) -> Result<Self> {
        let ns = match cmd.body.get(name) {
            Some(Bson::String(ns)) => ns.clone(),
            Some(other) => {
                return Err(args::wrong_type(
                    &format!("{name}.{name}"),
                    other,
                    "'string'",
                ));
            }
            None => return Err(args::missing(name)),
        };
        let Some((db, coll)) = ns
            .split_once('.')
            .filter(|(d, c)| !d.is_empty() && !c.is_empty())
        else {
            return Err(EngineError::new(
                ErrorCode::INVALID_NAMESPACE,
                format!("Invalid namespace specified '{ns}'"),
            ));
        };
        if ["keyPattern", "min", "max"]
            .iter()
            .any(|f| cmd.body.contains_key(*f))
        {
            return Err(EngineError::not_implemented(
                "dataSize over a key range (keyPattern/min/max)",
            ));
        }
        args::reject_unknown(cmd, name, &["estimate"])?;
        Ok(Self {
            db: db.to_string(),
            coll: coll.to_string(),
        })
    }

    /// `{size, numObjects, millis}`, measured.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let started = std::time::Instant::now();
        let (size, count) = ctx.engine.data_size(&self.db, &self.coll);
        let int = |n: u64| match i32::try_from(n) {
            Ok(v) => Bson::Int32(v),
            Err(_) => Bson::Int64(i64::try_from(n).unwrap_or(i64::MAX)),
        };
        let millis = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        Ok(doc! {
            "size": int(size),
            "numObjects": int(count as u64),
            "millis": millis,
        })
    }
}
