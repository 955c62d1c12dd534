//! Running one unified test: entities, initial data, operations with their
//! result and error assertions, command-event assertions and the final
//! collection contents.
//!
//! Each test gets its own database names (the file's names with a numeric
//! suffix, `admin` excepted), so no test sees another's leftovers. Driver
//! clients are kept per (entity id, URI options) and reused across tests; their
//! event buffers are cleared when a test starts.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use bson::{Bson, Document, doc};
use futures_util::TryStreamExt;
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use mongodb::options::{
    ClientOptions, CollectionOptions, DatabaseOptions, ReadConcern, ReadPreference,
    SelectionCriteria, WriteConcern,
};
use mongodb::{Client, Collection};

use super::matcher::{Mismatch, match_document, matches};
use super::operations::{Entity, ErrorInfo, OpFailure, execute};

/// How a test ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

type Events = Arc<Mutex<Vec<CommandEvent>>>;

struct CachedClient {
    client: Client,
    events: Events,
}

/// A client entity of the current test and what it observes.
struct ClientEntity {
    events: Events,
    observe: Vec<String>,
    ignore: Vec<String>,
    sensitive: bool,
}

/// Commands whose events are hidden unless `observeSensitiveCommands`.
const SENSITIVE: &[&str] = &[
    "hello",
    "ismaster",
    "isMaster",
    "saslStart",
    "saslContinue",
    "getnonce",
    "authenticate",
    "createUser",
    "updateUser",
    "copydbgetnonce",
    "copydbsaslstart",
    "copydb",
];

/// Runs tests against one server, reusing driver clients between tests.
pub struct Runner {
    uri: String,
    internal: Client,
    clients: HashMap<String, CachedClient>,
    counter: usize,
    /// Why the server cannot be reached, if it cannot: every test fails fast.
    unreachable: Option<String>,
    /// Assertions skipped rather than failed, by reason.
    pub skipped_assertions: BTreeMap<String, usize>,
}

/// Options that keep a hanging or absent server from stalling the suite.
const BOUND: &str = "serverSelectionTimeoutMS=5000&connectTimeoutMS=5000";

fn with_options(uri: &str, extra: &str) -> String {
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{extra}")
}

impl Runner {
    /// Connects the internal (unobserved) client to `uri`.
    pub async fn new(uri: &str) -> Result<Self, String> {
        let options = ClientOptions::parse(with_options(uri, BOUND))
            .await
            .map_err(|e| e.to_string())?;
        let internal = Client::with_options(options).map_err(|e| e.to_string())?;
        let unreachable = internal
            .database("admin")
            .run_command(doc! {"ping": 1})
            .await
            .err()
            .map(|e| format!("server unreachable: {e}"));
        Ok(Runner {
            uri: uri.to_owned(),
            internal,
            clients: HashMap::new(),
            counter: 0,
            unreachable,
            skipped_assertions: BTreeMap::new(),
        })
    }

    async fn client(
        &mut self,
        id: &str,
        uri_options: Option<&Document>,
    ) -> Result<(Client, Events), String> {
        let key = format!(
            "{id}|{}",
            uri_options.map(ToString::to_string).unwrap_or_default()
        );
        if let Some(c) = self.clients.get(&key) {
            c.events.lock().unwrap().clear();
            return Ok((c.client.clone(), c.events.clone()));
        }
        let mut extra = BOUND.to_owned();
        for (k, v) in uri_options.into_iter().flatten() {
            let v = match v {
                Bson::String(s) => s.clone(),
                other => other.to_string(),
            };
            extra.push_str(&format!("&{k}={v}"));
        }
        let mut options = ClientOptions::parse(with_options(&self.uri, &extra))
            .await
            .map_err(|e| format!("client {id}: {e}"))?;
        let events: Events = Arc::default();
        let sink = events.clone();
        options.command_event_handler = Some(EventHandler::callback(move |ev: CommandEvent| {
            sink.lock().unwrap().push(ev);
        }));
        let client = Client::with_options(options).map_err(|e| format!("client {id}: {e}"))?;
        self.clients.insert(
            key,
            CachedClient {
                client: client.clone(),
                events: events.clone(),
            },
        );
        Ok((client, events))
    }

    /// Runs `test` of `file`.
    pub async fn run_test(&mut self, file: &Document, test: &Document) -> Outcome {
        if let Some(why) = &self.unreachable {
            return Outcome::Fail(why.clone());
        }
        self.counter += 1;
        let mut entities_spec = Bson::Array(
            file.get_array("createEntities")
                .cloned()
                .unwrap_or_default(),
        );
        let mut initial = Bson::Array(file.get_array("initialData").cloned().unwrap_or_default());
        let mut test = Bson::Document(test.clone());
        let mut names = Vec::new();
        collect_db_names(&entities_spec, &mut names);
        collect_db_names(&initial, &mut names);
        collect_db_names(&test, &mut names);
        let renames: HashMap<String, String> = names
            .into_iter()
            .filter(|n| !matches!(n.as_str(), "admin" | "local" | "config"))
            .map(|n| {
                let new = format!("{n}_{}", self.counter);
                (n, new)
            })
            .collect();
        for b in [&mut entities_spec, &mut initial, &mut test] {
            rename(b, &renames);
        }
        let Bson::Document(test) = test else {
            return Outcome::Fail("test is not a document".into());
        };
        match self.run_renamed(&entities_spec, &initial, &test).await {
            Ok(()) => Outcome::Pass,
            Err(o) => o,
        }
    }

    async fn run_renamed(
        &mut self,
        entities_spec: &Bson,
        initial: &Bson,
        test: &Document,
    ) -> Result<(), Outcome> {
        let fail = Outcome::Fail;
        let mut entities: HashMap<String, Entity> = HashMap::new();
        let mut client_entities: HashMap<String, ClientEntity> = HashMap::new();
        for e in entities_spec
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Bson::as_document)
        {
            if let Ok(c) = e.get_document("client") {
                let id = c.get_str("id").unwrap_or("client");
                let (client, events) = self
                    .client(id, c.get_document("uriOptions").ok())
                    .await
                    .map_err(fail)?;
                let strings = |k: &str| -> Vec<String> {
                    c.get_array(k)
                        .map(|a| {
                            a.iter()
                                .filter_map(Bson::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                client_entities.insert(
                    id.to_owned(),
                    ClientEntity {
                        events,
                        observe: strings("observeEvents"),
                        ignore: strings("ignoreCommandMonitoringEvents"),
                        sensitive: c.get_bool("observeSensitiveCommands").unwrap_or(false),
                    },
                );
                entities.insert(id.to_owned(), Entity::Client(client));
            } else if let Ok(d) = e.get_document("database") {
                let id = d.get_str("id").unwrap_or("database");
                let Some(Entity::Client(client)) = entities.get(d.get_str("client").unwrap_or(""))
                else {
                    return Err(fail(format!("database {id}: unknown client")));
                };
                let o = d
                    .get_document("databaseOptions")
                    .cloned()
                    .unwrap_or_default();
                let (sc, rc, wc) = read_write_options(&o).map_err(fail)?;
                let options = DatabaseOptions::builder()
                    .selection_criteria(sc)
                    .read_concern(rc)
                    .write_concern(wc)
                    .build();
                let db = client
                    .database_with_options(d.get_str("databaseName").unwrap_or("test"), options);
                entities.insert(id.to_owned(), Entity::Database(db));
            } else if let Ok(c) = e.get_document("collection") {
                let id = c.get_str("id").unwrap_or("collection");
                let Some(Entity::Database(db)) = entities.get(c.get_str("database").unwrap_or(""))
                else {
                    return Err(fail(format!("collection {id}: unknown database")));
                };
                let o = c
                    .get_document("collectionOptions")
                    .cloned()
                    .unwrap_or_default();
                let (sc, rc, wc) = read_write_options(&o).map_err(fail)?;
                let options = CollectionOptions::builder()
                    .selection_criteria(sc)
                    .read_concern(rc)
                    .write_concern(wc)
                    .build();
                let coll: Collection<Document> = db.collection_with_options(
                    c.get_str("collectionName").unwrap_or("coll"),
                    options,
                );
                entities.insert(id.to_owned(), Entity::Collection(coll));
            }
        }

        for data in initial
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Bson::as_document)
        {
            let db = self
                .internal
                .database(data.get_str("databaseName").unwrap_or("test"));
            let name = data.get_str("collectionName").unwrap_or("coll");
            let coll = db.collection::<Document>(name);
            coll.drop()
                .await
                .map_err(|e| fail(format!("initialData drop: {e}")))?;
            let docs: Vec<Document> = data
                .get_array("documents")
                .map(|a| a.iter().filter_map(Bson::as_document).cloned().collect())
                .unwrap_or_default();
            if docs.is_empty() {
                let o: mongodb::options::CreateCollectionOptions = bson::from_document(
                    data.get_document("createOptions")
                        .cloned()
                        .unwrap_or_default(),
                )
                .map_err(|e| fail(format!("initialData createOptions: {e}")))?;
                db.create_collection(name)
                    .with_options(o)
                    .await
                    .map_err(|e| fail(format!("initialData create: {e}")))?;
            } else {
                coll.insert_many(docs)
                    .await
                    .map_err(|e| fail(format!("initialData insert: {e}")))?;
            }
        }
        for c in client_entities.values() {
            c.events.lock().unwrap().clear();
        }

        for (i, op) in test
            .get_array("operations")
            .into_iter()
            .flatten()
            .filter_map(Bson::as_document)
            .enumerate()
        {
            let name = op.get_str("name").unwrap_or("");
            let object = op.get_str("object").unwrap_or("");
            let at = format!("operation {i} ({object}.{name})");
            let Some(target) = entities.get(object) else {
                return Err(fail(format!("{at}: unknown entity")));
            };
            let args = op.get_document("arguments").cloned().unwrap_or_default();
            let result = execute(target, name, &args).await;
            self.check_operation(op, result).map_err(|o| match o {
                Outcome::Fail(m) => Outcome::Fail(format!("{at}: {m}")),
                other => other,
            })?;
        }

        if let Ok(expected) = test.get_array("expectEvents") {
            for ee in expected.iter().filter_map(Bson::as_document) {
                let id = ee.get_str("client").unwrap_or("");
                let Some(c) = client_entities.get(id) else {
                    return Err(fail(format!("expectEvents: unknown client {id}")));
                };
                self.check_events(c, ee)?;
            }
        }

        if let Ok(outcome) = test.get_array("outcome") {
            for data in outcome.iter().filter_map(Bson::as_document) {
                let db = data.get_str("databaseName").unwrap_or("test");
                let name = data.get_str("collectionName").unwrap_or("coll");
                let coll = self.internal.database(db).collection::<Document>(name);
                let actual: Vec<Document> = coll
                    .find(doc! {})
                    .sort(doc! {"_id": 1})
                    .read_concern(ReadConcern::local())
                    .await
                    .map_err(|e| fail(format!("outcome find: {e}")))?
                    .try_collect()
                    .await
                    .map_err(|e| fail(format!("outcome find: {e}")))?;
                let expected: Vec<&Document> = data
                    .get_array("documents")
                    .into_iter()
                    .flatten()
                    .filter_map(Bson::as_document)
                    .collect();
                let show = || {
                    let docs: Vec<String> = actual.iter().map(ToString::to_string).collect();
                    docs.join(", ")
                };
                if expected.len() != actual.len() {
                    return Err(fail(format!(
                        "outcome {name}: expected {} documents, found {}: [{}]",
                        expected.len(),
                        actual.len(),
                        show()
                    )));
                }
                for (e, a) in expected.iter().zip(&actual) {
                    match_document(e, a, false, "")
                        .map_err(|m| fail(format!("outcome {name}: {m}; found [{}]", show())))?;
                }
            }
        }
        Ok(())
    }

    fn check_operation(
        &mut self,
        op: &Document,
        result: Result<Option<Bson>, OpFailure>,
    ) -> Result<(), Outcome> {
        let expect_error = op.get_document("expectError").ok();
        let expect_result = op.get("expectResult");
        match result {
            Err(OpFailure::Unsupported(why)) => Err(Outcome::Skip(why)),
            Err(OpFailure::Runner(why)) => Err(Outcome::Fail(format!("runner: {why}"))),
            Ok(value) => {
                if let Some(e) = expect_error {
                    return Err(Outcome::Fail(format!(
                        "expected error {e}, got result {}",
                        value.unwrap_or(Bson::Null)
                    )));
                }
                if let Some(expected) = expect_result {
                    self.assert_match(expected, value.as_ref(), true, "result")?;
                }
                Ok(())
            }
            Err(OpFailure::Error(info)) => match expect_error {
                None if op.get_bool("ignoreResultAndError").unwrap_or(false) => Ok(()),
                None => Err(Outcome::Fail(format!(
                    "unexpected error: {}",
                    describe(&info)
                ))),
                Some(e) => self.check_error(e, &info),
            },
        }
    }

    /// A match whose unsupported matchers skip the test instead of failing it.
    fn assert_match(
        &mut self,
        expected: &Bson,
        actual: Option<&Bson>,
        root: bool,
        what: &str,
    ) -> Result<(), Outcome> {
        match matches(expected, actual, root, "") {
            Ok(()) => Ok(()),
            Err(Mismatch::Unsupported(why)) => {
                *self.skipped_assertions.entry(why.clone()).or_default() += 1;
                Err(Outcome::Skip(why))
            }
            Err(Mismatch::Differ(m)) => Err(Outcome::Fail(format!("{what} {m}"))),
        }
    }

    fn check_error(&mut self, expected: &Document, info: &ErrorInfo) -> Result<(), Outcome> {
        let fail = |m: String| {
            Err(Outcome::Fail(format!(
                "{m} (error was: {})",
                describe(info)
            )))
        };
        if let Ok(client) = expected.get_bool("isClientError")
            && client != info.client
        {
            return fail(format!("expected isClientError={client}"));
        }
        if let Ok(s) = expected.get_str("errorContains")
            && !info.message.to_lowercase().contains(&s.to_lowercase())
        {
            return fail(format!("expected message containing {s:?}"));
        }
        if let Some(code) = expected.get("errorCode") {
            let want = match code {
                Bson::Int32(c) => i64::from(*c),
                Bson::Int64(c) => *c,
                _ => -1,
            };
            if info.code.map(i64::from) != Some(want) {
                return fail(format!("expected code {code}"));
            }
        }
        if let Ok(name) = expected.get_str("errorCodeName")
            && info.code_name.as_deref() != Some(name)
        {
            return fail(format!("expected codeName {name}"));
        }
        for label in expected
            .get_array("errorLabelsContain")
            .into_iter()
            .flatten()
            .filter_map(Bson::as_str)
        {
            if !info.labels.iter().any(|l| l == label) {
                return fail(format!("expected label {label}"));
            }
        }
        for label in expected
            .get_array("errorLabelsOmit")
            .into_iter()
            .flatten()
            .filter_map(Bson::as_str)
        {
            if info.labels.iter().any(|l| l == label) {
                return fail(format!("unexpected label {label}"));
            }
        }
        if let Some(e) = expected.get("expectResult") {
            self.assert_match(e, info.partial.as_ref(), true, "error result")?;
        }
        if let Some(e) = expected.get("errorResponse") {
            let response = info.response.clone().map(Bson::Document);
            self.assert_match(e, response.as_ref(), true, "error response")?;
        }
        Ok(())
    }

    fn check_events(&mut self, client: &ClientEntity, expected: &Document) -> Result<(), Outcome> {
        let observed: Vec<CommandEvent> = client
            .events
            .lock()
            .unwrap()
            .iter()
            .filter(|ev| {
                let (kind, name) = match ev {
                    CommandEvent::Started(e) => ("commandStartedEvent", e.command_name.as_str()),
                    CommandEvent::Succeeded(e) => {
                        ("commandSucceededEvent", e.command_name.as_str())
                    }
                    CommandEvent::Failed(e) => ("commandFailedEvent", e.command_name.as_str()),
                    _ => ("", ""),
                };
                client.observe.iter().any(|o| o == kind)
                    && !client.ignore.iter().any(|i| i == name)
                    && name != "configureFailPoint"
                    && (client.sensitive || !SENSITIVE.contains(&name))
            })
            .cloned()
            .collect();
        let names = || {
            observed
                .iter()
                .map(|ev| match ev {
                    CommandEvent::Started(e) => format!("started {}", e.command_name),
                    CommandEvent::Succeeded(e) => format!("succeeded {}", e.command_name),
                    CommandEvent::Failed(e) => format!("failed {}", e.command_name),
                    _ => "other".to_owned(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let wanted: Vec<&Document> = expected
            .get_array("events")
            .into_iter()
            .flatten()
            .filter_map(Bson::as_document)
            .collect();
        let extra_ok = expected.get_bool("ignoreExtraEvents").unwrap_or(false);
        if observed.len() < wanted.len() || (!extra_ok && observed.len() != wanted.len()) {
            return Err(Outcome::Fail(format!(
                "expected {} events, observed {}: [{}]",
                wanted.len(),
                observed.len(),
                names()
            )));
        }
        for (i, (w, ev)) in wanted.iter().zip(&observed).enumerate() {
            let Some((kind, spec)) = w.iter().next() else {
                continue;
            };
            let Bson::Document(spec) = spec else { continue };
            let what = format!("event {i}");
            match (kind.as_str(), ev) {
                ("commandStartedEvent", CommandEvent::Started(e)) => {
                    if let Some(cmd) = spec.get("command") {
                        self.assert_match(
                            cmd,
                            Some(&Bson::Document(e.command.clone())),
                            true,
                            &format!("{what} command"),
                        )?;
                    }
                    check_str(spec, "commandName", &e.command_name, &what)?;
                    check_str(spec, "databaseName", &e.db, &what)?;
                }
                ("commandSucceededEvent", CommandEvent::Succeeded(e)) => {
                    if let Some(reply) = spec.get("reply") {
                        self.assert_match(
                            reply,
                            Some(&Bson::Document(e.reply.clone())),
                            true,
                            &format!("{what} reply"),
                        )?;
                    }
                    check_str(spec, "commandName", &e.command_name, &what)?;
                }
                ("commandFailedEvent", CommandEvent::Failed(e)) => {
                    check_str(spec, "commandName", &e.command_name, &what)?;
                }
                _ => {
                    return Err(Outcome::Fail(format!(
                        "{what}: expected {kind}, observed [{}]",
                        names()
                    )));
                }
            }
            for k in spec.keys() {
                if !matches!(
                    k.as_str(),
                    "command" | "reply" | "commandName" | "databaseName"
                ) {
                    *self
                        .skipped_assertions
                        .entry(format!("event field {k} not checked"))
                        .or_default() += 1;
                }
            }
        }
        Ok(())
    }
}

fn check_str(spec: &Document, key: &str, actual: &str, what: &str) -> Result<(), Outcome> {
    match spec.get_str(key) {
        Ok(want) if want != actual => Err(Outcome::Fail(format!(
            "{what}: expected {key} {want}, got {actual}"
        ))),
        _ => Ok(()),
    }
}

fn describe(info: &ErrorInfo) -> String {
    let mut s = String::new();
    if info.client {
        s.push_str("client error: ");
    }
    if let Some(c) = info.code {
        s.push_str(&format!("code {c} "));
    }
    if let Some(n) = &info.code_name {
        s.push_str(&format!("({n}) "));
    }
    s.push_str(info.message.lines().next().unwrap_or(""));
    s
}

type RwOptions = (
    Option<SelectionCriteria>,
    Option<ReadConcern>,
    Option<WriteConcern>,
);

/// `readPreference`, `readConcern` and `writeConcern` of entity options.
fn read_write_options(o: &Document) -> Result<RwOptions, String> {
    let sc = match o.get("readPreference") {
        Some(rp) => Some(SelectionCriteria::ReadPreference(
            bson::from_bson::<ReadPreference>(rp.clone())
                .map_err(|e| format!("readPreference: {e}"))?,
        )),
        None => None,
    };
    let rc = match o.get("readConcern") {
        Some(rc) => Some(
            bson::from_bson::<ReadConcern>(rc.clone()).map_err(|e| format!("readConcern: {e}"))?,
        ),
        None => None,
    };
    let wc = match o.get("writeConcern") {
        Some(wc) => Some(
            bson::from_bson::<WriteConcern>(wc.clone())
                .map_err(|e| format!("writeConcern: {e}"))?,
        ),
        None => None,
    };
    Ok((sc, rc, wc))
}

/// Keys whose string values name a database.
fn is_db_key(k: &str) -> bool {
    matches!(k, "databaseName" | "db" | "$db")
}

fn collect_db_names(b: &Bson, out: &mut Vec<String>) {
    match b {
        Bson::Document(d) => {
            for (k, v) in d {
                match v {
                    Bson::String(s) if is_db_key(k) => {
                        if !out.contains(s) {
                            out.push(s.clone());
                        }
                    }
                    other => collect_db_names(other, out),
                }
            }
        }
        Bson::Array(a) => a.iter().for_each(|v| collect_db_names(v, out)),
        _ => {}
    }
}

fn rename(b: &mut Bson, map: &HashMap<String, String>) {
    match b {
        Bson::Document(d) => {
            for (k, v) in d.iter_mut() {
                match v {
                    Bson::String(s) if is_db_key(k) => {
                        if let Some(new) = map.get(s.as_str()) {
                            s.clone_from(new);
                        }
                    }
                    other => rename(other, map),
                }
            }
        }
        Bson::Array(a) => a.iter_mut().for_each(|v| rename(v, map)),
        _ => {}
    }
}
