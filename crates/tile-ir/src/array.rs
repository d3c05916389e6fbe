//! Host arrays: typed, row-major, compact data for parameters.

use crate::DType;

/// The elements of an array, in the array's own type.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayData {
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
    /// `i32` elements.
    I32(Vec<i32>),
    /// `bool` elements, one byte each (0 or 1).
    Bool(Vec<u8>),
}

/// A row-major array with a shape; the storage of one parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// Extent of each dimension.
    pub shape: Vec<usize>,
    /// The elements; `len() == shape.iter().product()`.
    pub data: ArrayData,
}

impl Array {
    /// An array of zeros.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Array {
        let n = shape.iter().product();
        let data = match dtype {
            DType::F32 => ArrayData::F32(vec![0.0; n]),
            DType::F64 => ArrayData::F64(vec![0.0; n]),
            DType::I32 => ArrayData::I32(vec![0; n]),
            DType::Bool => ArrayData::Bool(vec![0; n]),
        };
        Array {
            shape: shape.to_vec(),
            data,
        }
    }

    /// An array of `dtype` filled from `f64` values (rounded to `dtype`).
    pub fn from_f64(dtype: DType, shape: &[usize], values: &[f64]) -> Array {
        let mut a = Array::zeros(dtype, shape);
        assert_eq!(a.len(), values.len(), "value count must match the shape");
        for (i, v) in values.iter().enumerate() {
            a.set_f64(i, *v);
        }
        a
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match self.data {
            ArrayData::F32(_) => DType::F32,
            ArrayData::F64(_) => DType::F64,
            ArrayData::I32(_) => DType::I32,
            ArrayData::Bool(_) => DType::Bool,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.data {
            ArrayData::F32(v) => v.len(),
            ArrayData::F64(v) => v.len(),
            ArrayData::I32(v) => v.len(),
            ArrayData::Bool(v) => v.len(),
        }
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (flat, row-major) widened to `f64`.
    pub fn get_f64(&self, i: usize) -> f64 {
        match &self.data {
            ArrayData::F32(v) => v[i] as f64,
            ArrayData::F64(v) => v[i],
            ArrayData::I32(v) => v[i] as f64,
            ArrayData::Bool(v) => v[i] as f64,
        }
    }

    /// Sets element `i` from an `f64`, rounding to the array's type
    /// (integers truncate toward zero, booleans are `x != 0`).
    pub fn set_f64(&mut self, i: usize, x: f64) {
        match &mut self.data {
            ArrayData::F32(v) => v[i] = x as f32,
            ArrayData::F64(v) => v[i] = x,
            ArrayData::I32(v) => v[i] = x as i32,
            ArrayData::Bool(v) => v[i] = (x != 0.0) as u8,
        }
    }

    /// All elements widened to `f64`.
    pub fn to_f64(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.get_f64(i)).collect()
    }

    /// The raw bytes of the elements (native endianness).
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: every element type here is plain old data without padding.
        unsafe {
            match &self.data {
                ArrayData::F32(v) => {
                    std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 4)
                }
                ArrayData::F64(v) => {
                    std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8)
                }
                ArrayData::I32(v) => {
                    std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 4)
                }
                ArrayData::Bool(v) => v.as_slice(),
            }
        }
    }

    /// A pointer to the first element.
    pub fn as_ptr(&self) -> *const u8 {
        self.as_bytes().as_ptr()
    }

    /// A mutable pointer to the first element.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match &mut self.data {
            ArrayData::F32(v) => v.as_mut_ptr() as *mut u8,
            ArrayData::F64(v) => v.as_mut_ptr() as *mut u8,
            ArrayData::I32(v) => v.as_mut_ptr() as *mut u8,
            ArrayData::Bool(v) => v.as_mut_ptr(),
        }
    }
}
