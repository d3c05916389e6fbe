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
    let header =
        std::str::from_utf8(header).map_err(|_| NpyError("the .npy header is not text".into()))?;
    let Header {
        descr,
        fortran_order,
        shape,
    } = parse_header(header)?;
    if fortran_order {
        return err("Fortran-ordered .npy arrays are not supported; save with C order");
    }
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

/// The three fields of a `.npy` header.
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// A value in a `.npy` header: the Python literals NumPy writes there.
#[derive(Debug)]
enum Value {
    Str(String),
    Bool(bool),
    Int(usize),
    Tuple(Vec<usize>),
}

/// Parses a header as strictly as NumPy (which evaluates it as a Python
/// literal and then checks it): one dict with exactly the keys `descr`
/// (a string), `fortran_order` (`True` or `False`) and `shape` (a tuple
/// of non-negative integers), each once, with only spaces and a newline
/// after it. Anything else is refused with what is wrong.
fn parse_header(text: &str) -> Result<Header, NpyError> {
    let mut p = Cursor {
        s: text.as_bytes(),
        at: 0,
    };
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.space();
        if p.eat(b'}') {
            break;
        }
        let key = match p.value()? {
            Value::Str(k) => k,
            v => return err(format!("a .npy header key must be a string, found {v:?}")),
        };
        p.space();
        p.expect(b':')?;
        p.space();
        let value = p.value()?;
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran,
            "shape" => &mut shape,
            other => return err(format!("unexpected key '{other}' in the .npy header")),
        };
        if slot.is_some() {
            return err(format!("the .npy header gives '{key}' twice"));
        }
        *slot = Some(value);
        p.space();
        if !p.eat(b',') {
            p.space();
            p.expect(b'}')?;
            break;
        }
    }
    if p.s[p.at..]
        .iter()
        .any(|&b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r' | 0))
    {
        return err("the .npy header has text after its dict");
    }
    let descr = match descr {
        Some(Value::Str(d)) => d,
        Some(v) => return err(format!("'descr' must be a string, found {v:?}")),
        None => return err("no 'descr' in .npy header"),
    };
    let fortran_order = match fortran {
        Some(Value::Bool(b)) => b,
        Some(v) => {
            return err(format!(
                "'fortran_order' must be True or False, found {v:?}"
            ))
        }
        None => return err("no 'fortran_order' in .npy header"),
    };
    let shape = match shape {
        Some(Value::Tuple(t)) => t,
        Some(Value::Int(n)) => {
            return err(format!(
                "'shape' must be a tuple of integers, found the integer {n} (write ({n},))"
            ))
        }
        Some(v) => return err(format!("'shape' must be a tuple of integers, found {v:?}")),
        None => return err("no 'shape' in .npy header"),
    };
    Ok(Header {
        descr,
        fortran_order,
        shape,
    })
}

/// A position in a header's bytes.
struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.at += hit as usize;
        hit
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        if self.eat(c) {
            return Ok(());
        }
        match self.peek() {
            Some(f) => err(format!(
                "bad .npy header: expected '{}' at byte {}, found '{}'",
                c as char,
                self.at,
                f.escape_ascii()
            )),
            None => err(format!(
                "bad .npy header: it ends where '{}' was expected (unterminated)",
                c as char
            )),
        }
    }

    fn int(&mut self) -> Result<usize, NpyError> {
        let from = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.s[from..self.at]).unwrap_or("");
        if digits.is_empty() {
            return err(format!(
                "bad .npy header: expected an integer at byte {from}"
            ));
        }
        digits
            .parse()
            .map_err(|_| NpyError(format!("bad .npy header: {digits} is too large")))
    }

    fn value(&mut self) -> Result<Value, NpyError> {
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.at += 1;
                let from = self.at;
                while self
                    .peek()
                    .is_some_and(|b| b != q && b != b'\\' && b != b'\n')
                {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[from..self.at]).unwrap_or("");
                let text = text.to_string();
                self.expect(q)?;
                Ok(Value::Str(text))
            }
            Some(b'(') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.space();
                    if self.eat(b')') {
                        break;
                    }
                    if self.peek() == Some(b'(') {
                        return err("bad .npy header: a shape holds integers, not tuples");
                    }
                    items.push(self.int()?);
                    self.space();
                    if !self.eat(b',') {
                        self.space();
                        self.expect(b')')?;
                        if items.len() == 1 {
                            // `(3)` is the integer 3 in Python, not a tuple.
                            return Ok(Value::Int(items[0]));
                        }
                        break;
                    }
                }
                Ok(Value::Tuple(items))
            }
            Some(b'0'..=b'9') => Ok(Value::Int(self.int()?)),
            _ => {
                for (word, v) in [("True", true), ("False", false)] {
                    if self.s[self.at..].starts_with(word.as_bytes()) {
                        self.at += word.len();
                        return Ok(Value::Bool(v));
                    }
                }
                match self.peek() {
                    Some(f) => err(format!(
                        "bad .npy header: unexpected '{}' at byte {}",
                        f.escape_ascii(),
                        self.at
                    )),
                    None => err("bad .npy header: it ends inside its dict (unterminated)"),
                }
            }
        }
    }
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

    /// A `.npy` file with this header and `data`.
    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn headers_numpy_refuses_are_refused() {
        let four = [0u8; 8];
        let ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }  \n";
        assert!(read_npy(&file(ok, &four)).is_ok());
        let ok = "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,)}\n";
        assert!(read_npy(&file(ok, &four)).is_ok());
        for (header, why) in [
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1,), }\n",
                "twice",
            ),
            (
                "{'descr': '<f4', 'fortran_order': 'False', 'shape': (2,), }\n",
                "True or False",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': ((2,),), }\n",
                "not tuples",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ",
                "unterminated",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}x\n",
                "after its dict",
            ),
            ("{'descr': '<f4', 'shape': (2,)}\n", "no 'fortran_order'"),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': 2}\n",
                "tuple",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}\n",
                "tuple",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}\n",
                "integer",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n",
                "'x'",
            ),
            (
                "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}\n",
                "expected",
            ),
        ] {
            let e = read_npy(&file(header, &four)).unwrap_err();
            assert!(e.0.contains(why), "{header}: {e}");
        }
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
