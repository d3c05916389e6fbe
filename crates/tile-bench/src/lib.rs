//! Tile's measurement harness (docs/benchmarking.md): the suite as data, the
//! protocol, Tile's targets and the Python peers, results with raw samples
//! and sources, the report, and an independent audit.
#![deny(missing_docs)]

pub mod audit;
mod cpu;
mod cuda;
pub mod digest;
pub mod oracle;
pub mod peers;
pub mod protocol;
pub mod report;
pub mod run;
pub mod suite;
pub mod target;
#[cfg(feature = "wgpu")]
mod wgpu;

pub use run::{bench, default_peers, BenchArgs};
