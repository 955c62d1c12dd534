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
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<ExitCode> {
    let lang = ctx.lang;
    let port = args.port;
    let runtime = schemalab::connect::runtime()?;
    runtime
        .block_on(schemalab_wire::run_serve(port))
        .with_context(|| lang.f("serving on 127.0.0.1:{port}", &[("port", &port)]))?;
    Ok(ExitCode::SUCCESS)
}
