//! `schemalab serve`: the embedded engine on a loopback port, for mongosh,
//! pymongo, Compass or any driver, until interrupted.

use std::process::ExitCode;

use anyhow::Context as _;

use super::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 27017)]
    port: u16,
    /// The modelled WiredTiger cache's size in GB, as mongod's option
    /// (default: 50% of RAM less 1 GB, at least 256 MB).
    #[arg(long = "wiredTigerCacheSizeGB", value_name = "GB")]
    wired_tiger_cache_size_gb: Option<f64>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let port = args.port;
    let engine = schemalab_engine::Engine::new();
    if let Some(gb) = args.wired_tiger_cache_size_gb {
        let bytes = schemalab_engine::cache::config::size_from_gb(gb)?;
        engine.params().cache().set_max_bytes(bytes);
    }
    let runtime = schemalab::connect::runtime()?;
    runtime
        .block_on(schemalab_wire::run_serve_engine(port, engine))
        .with_context(|| lang.f("serving on 127.0.0.1:{port}", &[("port", &port)]))?;
    Ok(ExitCode::SUCCESS)
}
