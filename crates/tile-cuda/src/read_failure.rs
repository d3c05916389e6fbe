//! Decoding the failure word a launch wrote: the kernel, entry point and
//! site it names, as the error the CPU target reports for the same site.

use crate::compile::CudaModule;
use crate::emit::{KERNEL_SITES, MM_SITE_BASE, ROWS_SITE_BASE, V4_SITE_BASE};
use crate::runtime::DeviceBuffer;
use crate::CudaError;

impl CudaModule {
    /// Reads a failure word after its launches finished (and zeroes it
    /// again), naming the failed check.
    pub(crate) fn read_failure(&self, err: &DeviceBuffer) -> Result<(), CudaError> {
        let mut word = [0u8; 4];
        err.download(&mut word)?;
        let site = i32::from_ne_bytes(word);
        if site == 0 {
            return Ok(());
        }
        err.fill_u32(0)?;
        let (k, within) = (site / KERNEL_SITES, site % KERNEL_SITES);
        if let Some(info) = usize::try_from(k).ok().and_then(|k| self.kernels.get(k)) {
            let out = |s: &tile_emit::Site| match s.what {
                "div" => CudaError::IntArith {
                    kernel: info.name.clone(),
                    line: s.line,
                },
                _ => CudaError::OutOfBounds {
                    kernel: info.name.clone(),
                    what: s.what.to_string(),
                    buf: s.buf.clone(),
                    line: s.line,
                },
            };
            let index = |base: i32| (within - base - 1) as usize;
            if within > MM_SITE_BASE {
                if let Some(s) = info.mm_sites.get(index(MM_SITE_BASE)) {
                    return Err(out(s));
                }
            } else if within > ROWS_SITE_BASE {
                if let Some(s) = info.rows_sites.get(index(ROWS_SITE_BASE)) {
                    return Err(out(s));
                }
            } else if within > V4_SITE_BASE {
                if let Some(buf) = info.v4_sites.get(index(V4_SITE_BASE)) {
                    return Err(CudaError::OutOfBounds {
                        kernel: info.name.clone(),
                        what: "vector access".into(),
                        buf: buf.clone(),
                        line: 0,
                    });
                }
            } else if let Some(s) = info.sites.get(index(0)) {
                return Err(out(s));
            }
        }
        Err(CudaError::OutOfBounds {
            kernel: "?".into(),
            what: format!("site {site}"),
            buf: "?".into(),
            line: 0,
        })
    }
}
