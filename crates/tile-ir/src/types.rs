//! Scalar types and parameter roles.

use std::fmt;

/// The element type of a buffer or the type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// Signed 32-bit integer (indices).
    I32,
    /// Boolean (masks, conditions).
    Bool,
}

impl DType {
    /// The spelling used in `.tile` text.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::Bool => "bool",
        }
    }

    /// Parses a `.tile` dtype name.
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "f32" => DType::F32,
            "f64" => DType::F64,
            "i32" => DType::I32,
            "bool" => DType::Bool,
            _ => return None,
        })
    }

    /// True for `f32` and `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// Size of one element in bytes as stored in buffers and `.npy` files.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F64 => 8,
            DType::Bool => 1,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a kernel uses a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read only.
    In,
    /// Written (starts from the caller's content).
    Out,
    /// Read and written.
    InOut,
}

impl Role {
    /// The spelling used in `.tile` text.
    pub fn name(self) -> &'static str {
        match self {
            Role::In => "in",
            Role::Out => "out",
            Role::InOut => "inout",
        }
    }

    /// True for `out` and `inout`.
    pub fn is_written(self) -> bool {
        !matches!(self, Role::In)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
