//! Finding Chromium, and installing Debian's `chromium` package when it is
//! missing (`spider setup`, `spider demo` and the test suite call
//! [`ensure_installed`], so a fresh machine needs no manual step).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::CaptureError;

/// Where Debian's `chromium` package puts the real binary. We call it
/// directly: `/usr/bin/chromium` is a wrapper script that adds flags.
pub const DEFAULT_PATH: &str = "/usr/lib/chromium/chromium";

/// Environment variable that overrides [`DEFAULT_PATH`].
pub const ENV_VAR: &str = "SPIDER_CHROMIUM";

/// The Chromium binary to use: `explicit`, else `$SPIDER_CHROMIUM`, else
/// [`DEFAULT_PATH`]; it must exist.
pub fn find(explicit: Option<&Path>) -> Result<PathBuf, CaptureError> {
    let path = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(ENV_VAR).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PATH));
    if path.is_file() {
        Ok(path)
    } else {
        Err(CaptureError::ChromiumMissing { path })
    }
}

/// Returns the Chromium binary, installing Debian's `chromium` package with
/// apt-get first when it is missing. Concurrent callers (parallel test
/// processes) serialise on a lock file, so apt-get runs once.
pub fn ensure_installed() -> Result<PathBuf, CaptureError> {
    if let Ok(path) = find(None) {
        return Ok(path);
    }
    if std::env::var_os(ENV_VAR).is_some() {
        // The user chose a binary; installing another would not help.
        return find(None);
    }
    let lock_path = std::env::temp_dir().join("spider-chromium-install.lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| CaptureError::Install {
        reason: format!("cannot create {}: {e}", lock_path.display()),
    })?;
    lock.lock().map_err(|e| CaptureError::Install {
        reason: format!("cannot lock {}: {e}", lock_path.display()),
    })?;
    if let Ok(path) = find(None) {
        return Ok(path);
    }
    if Command::new("apt-get").arg("--version").output().is_err() {
        return Err(CaptureError::Install {
            reason: format!(
                "{DEFAULT_PATH} is missing and apt-get is not available: install Chromium \
                 and set {ENV_VAR} to its binary"
            ),
        });
    }
    eprintln!("spider: {DEFAULT_PATH} is missing; installing Debian's chromium package (apt-get)");
    run_apt(&["update", "-q"])?;
    run_apt(&["install", "-y", "-q", "--no-install-recommends", "chromium"])?;
    find(None)
}

fn run_apt(args: &[&str]) -> Result<(), CaptureError> {
    let output = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| CaptureError::Install {
            reason: format!("cannot run apt-get: {e}"),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let hint = if stderr.contains("Permission denied") || stderr.contains("are you root") {
        " (apt-get needs root: run as root or install chromium yourself)"
    } else {
        ""
    };
    Err(CaptureError::Install {
        reason: format!(
            "`apt-get {}` failed with {}{hint}: {}",
            args.join(" "),
            output.status,
            stderr.trim()
        ),
    })
}
