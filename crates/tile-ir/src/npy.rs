//! Reading and writing `.npy` files (NumPy's array format, versions 1-3):
//! little- or big-endian `f4`, `f8`, `i4` and `b1`, C order.

use crate::{Array, ArrayData, DType};

/// Why a `.npy` file could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct NpyError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, NpyError> {
    Err(NpyError(msg.into()))
}

/// Parses the bytes of a `.npy` file.
pub fn read_npy(bytes: &[u8]) -> Result<Array, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return err("not a .npy file (bad magic)");
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return err("truncated .npy header");
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(start..start + hlen)
        .ok_or_else(|| NpyError("truncated .npy header".into()))?;
    let header = String::from_utf8_lossy(header);
    let field = |key: &str| -> Option<String> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        if let Some(r) = rest.strip_prefix('\'') {
            Some(r[..r.find('\'')?].to_string())
        } else if rest.starts_with('(') {
            Some(rest[..rest.find(')')? + 1].to_string())
        } else {
            Some(rest.split([',', '}']).next()?.trim().to_string())
        }
    };
    let descr = field("descr").ok_or_else(|| NpyError("no 'descr' in .npy header".into()))?;
    if field("fortran_order").as_deref() != Some("False") {
        return err("Fortran-ordered .npy arrays are not supported; save with C order");
    }
    let shape_text = field("shape").ok_or_else(|| NpyError("no 'shape' in .npy header".into()))?;
    let shape = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| NpyError(format!("bad shape {shape_text}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (big, code) = match descr.as_bytes().first() {
        Some(b'>') => (true, &descr[1..]),
        Some(b'<' | b'|' | b'=') => (false, &descr[1..]),
        _ => (false, descr.as_str()),
    };
    let dtype = match code {
        "f4" => DType::F32,
        "f8" => DType::F64,
        "i4" => DType::I32,
        "b1" => DType::Bool,
        _ => {
            return err(format!(
                "unsupported .npy dtype '{descr}' (use float32, float64, int32 or bool)"
            ))
        }
    };
    let (n, need) = crate::shape_bytes(dtype, &shape).map_err(|e| NpyError(e.to_string()))?;
    let w = dtype.size_bytes();
    let data = &bytes[start + hlen..];
    if data.len() as u64 != need {
        return err(format!(
            "the .npy data holds {} bytes, but shape {shape:?} of {dtype} needs {need}",
            data.len(),
        ));
    }
    let word = |i: usize| {
        let mut b = data[i * w..(i + 1) * w].to_vec();
        if big {
            b.reverse();
        }
        b
    };
    let arr = match dtype {
        DType::F32 => ArrayData::F32(
            (0..n)
                .map(|i| f32::from_le_bytes(word(i).try_into().unwrap_or([0; 4])))
                .collect(),
        ),
        DType::F64 => ArrayData::F64(
            (0..n)
                .map(|i| f64::from_le_bytes(word(i).try_into().unwrap_or([0; 8])))
                .collect(),
        ),
        DType::I32 => ArrayData::I32(
            (0..n)
                .map(|i| i32::from_le_bytes(word(i).try_into().unwrap_or([0; 4])))
                .collect(),
        ),
        DType::Bool => ArrayData::Bool(data.iter().map(|&b| (b != 0) as u8).collect()),
    };
    Array::new(shape, arr).map_err(|e| NpyError(e.to_string()))
}

/// The bytes of a version 1.0 `.npy` file holding `a` (little-endian).
pub fn write_npy(a: &Array) -> Vec<u8> {
    let descr = match a.dtype() {
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::I32 => "<i4",
        DType::Bool => "|b1",
    };
    let shape = match a.shape().len() {
        1 => format!("({},)", a.shape()[0]),
        _ => format!(
            "({})",
            a.shape()
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    match a.data() {
        ArrayData::F32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::F64(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::I32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::Bool(v) => out.extend_from_slice(v),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for dt in [DType::F32, DType::F64, DType::I32, DType::Bool] {
            let a = Array::from_f64(dt, &[2, 3], &[1.0, -2.0, 3.5, 0.0, 1.0, 7.0]);
            assert_eq!(read_npy(&write_npy(&a)).unwrap(), a);
        }
        let a = Array::from_f64(DType::F32, &[5], &[1.0; 5]);
        assert_eq!(read_npy(&write_npy(&a)).unwrap(), a);
        assert!(read_npy(b"garbage").is_err());
    }

    #[test]
    fn overflowing_shapes_are_errors() {
        let header =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        let e = read_npy(&bytes).unwrap_err();
        assert!(e.0.contains("more elements than memory"), "{e}");
    }
}
