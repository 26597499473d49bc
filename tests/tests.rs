//! spider's integration tests, one binary: real Chromium, real HTTP on
//! 127.0.0.1, real SQLite and PostgreSQL. Chromium is installed when missing;
//! a missing PostgreSQL fails its tests loudly.

mod util;

mod bookmarklet;
mod capture;
mod cli;
mod docker;
mod eval;
mod learn;
mod serve;
mod store;
