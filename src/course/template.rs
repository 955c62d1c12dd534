//! Loading one dataset many times: a [`DatasetLoader`] that generates each
//! `(dataset, scale, seed)` once into a template database on the server and
//! hands every later load a server-side copy of it
//! ([`crate::datasets::copy_database`]). Grading many solutions of one
//! exercise (the sweep, `exercises grade`) loads the same seeded data
//! hundreds of times; a copy skips generating the documents in Rust and
//! sending them through the driver.
//!
//! A copy is the same documents in the same natural order as a load, with
//! only the `_id` index, so what a solution measures is unchanged. When a
//! copy is refused (the template holds something a load does not make),
//! the loader falls back to loading. Templates are named
//! `schemalab_tpl_<n>`, so the write gate's `schemalab_` rule admits them;
//! [`TemplateLoader::drop_templates`] removes them.

use futures_util::future::BoxFuture;
use mongodb::Client;
use tokio::sync::Mutex;

use super::Scale;
use super::runner::DatasetLoader;
use crate::locale::Message;

/// What a template holds: a dataset at a scale and seed.
type Key = (String, Scale, u64);

/// A loader that keeps one generated copy of each dataset it was asked for.
pub struct TemplateLoader<L> {
    inner: L,
    /// `(dataset, scale, seed)` → the template database holding it. Held
    /// for a whole load, so a template is never copied half made.
    templates: Mutex<Vec<(Key, String)>>,
    /// Distinguishes this loader's templates from another's on one server:
    /// `<prefix>tpl_<tag>_`, the prefix a learner's own on a shared server.
    tag: String,
    prefix: String,
}

impl<L: DatasetLoader> TemplateLoader<L> {
    /// Wrap `inner`; `tag` (letters, digits, `_`) keeps this loader's
    /// template names apart from another loader's on the same server.
    pub fn new(inner: L, tag: &str) -> Self {
        TemplateLoader {
            inner,
            templates: Mutex::new(Vec::new()),
            tag: tag.to_string(),
            prefix: super::DB_PREFIX.to_string(),
        }
    }

    /// The same loader, its templates named as `names` names a run's
    /// databases (`schemalab_<learner>_tpl_…`).
    #[must_use]
    pub fn named(mut self, names: &super::DbNames) -> Self {
        self.prefix = names.prefix();
        self
    }

    /// Drop every template this loader made.
    pub async fn drop_templates(&self, client: &Client) {
        let names: Vec<String> = self
            .templates
            .lock()
            .await
            .drain(..)
            .map(|(_, db)| db)
            .collect();
        for db in names {
            let _ = client.database(&db).drop().await;
        }
    }
}

impl<L: DatasetLoader> DatasetLoader for TemplateLoader<L> {
    fn load<'a>(
        &'a self,
        client: &'a Client,
        db: &'a str,
        dataset: &'a str,
        scale: Scale,
        seed: u64,
    ) -> BoxFuture<'a, Result<(), Message>> {
        Box::pin(async move {
            let key = (dataset.to_string(), scale, seed);
            let mut templates = self.templates.lock().await;
            let template = match templates.iter().find(|(k, _)| *k == key) {
                Some((_, t)) => t.clone(),
                None => {
                    let t = format!("{}tpl_{}_{}", self.prefix, self.tag, templates.len());
                    // A template of an earlier session may still be there.
                    client.database(&t).drop().await.map_err(|e| {
                        Message::new("dropping {db}: {e}").arg("db", &t).arg("e", e)
                    })?;
                    self.inner.load(client, &t, dataset, scale, seed).await?;
                    templates.push((key, t.clone()));
                    t
                }
            };
            if crate::datasets::copy_database(client, &template, db)
                .await
                .is_ok()
            {
                return Ok(());
            }
            // Refused (the template holds what a load does not make): load.
            templates.retain(|(_, t)| *t != template);
            drop(templates);
            let _ = client.database(&template).drop().await;
            self.inner.load(client, db, dataset, scale, seed).await
        })
    }
}
