//! The built `schemalab` binary run as a user runs it, with the machine's
//! own language and URI settings cleared so that they cannot leak in.

use std::path::Path;
use std::process::Command;

/// What a run printed and how it ended.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the binary in `cwd` with `env` set.
pub fn schemalab_in(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schemalab"));
    cmd.current_dir(cwd)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env_remove("MONGODB_URI")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Run the binary in the workspace's folder: (exit code, stdout, stderr).
pub fn schemalab(args: &[&str]) -> (i32, String, String) {
    let out = schemalab_in(&super::root(), &[], args);
    (out.code, out.stdout, out.stderr)
}
