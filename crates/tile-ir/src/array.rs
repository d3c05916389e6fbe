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

/// Why an array cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ArrayError {
    /// The shape's element count or byte size overflows.
    #[error("shape {0:?} has more elements than memory can address")]
    TooLarge(Vec<usize>),
    /// The data's length is not the shape's element count.
    #[error("shape {shape:?} holds {expected} elements, but {found} were given")]
    Length {
        /// The shape.
        shape: Vec<usize>,
        /// Its element count.
        expected: usize,
        /// The data's length.
        found: usize,
    },
    /// The array would exceed the memory ceiling, or allocation failed.
    #[error("an array of shape {shape:?} ({dtype}) needs {bytes} bytes, {why}")]
    Memory {
        /// The shape.
        shape: Vec<usize>,
        /// The element type.
        dtype: DType,
        /// The bytes it needs.
        bytes: u64,
        /// The ceiling it exceeds, or the allocator's refusal.
        why: String,
    },
}

/// A row-major array with a shape; the storage of one parameter.
///
/// The fields are private: every constructor checks that the data holds
/// exactly the shape's element count, so code handing an array's memory
/// to a kernel can rely on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    shape: Vec<usize>,
    data: ArrayData,
}

/// The number of elements and bytes of `shape` of `dtype`, checked.
pub fn shape_bytes(dtype: DType, shape: &[usize]) -> Result<(usize, u64), ArrayError> {
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| ArrayError::TooLarge(shape.to_vec()))?;
    let bytes = n
        .checked_mul(dtype.size_bytes())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| ArrayError::TooLarge(shape.to_vec()))?;
    Ok((n, bytes as u64))
}

fn filled<T: Clone>(n: usize, v: T) -> Option<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).ok()?;
    out.resize(n, v);
    Some(out)
}

impl Array {
    /// An array from its shape and data; the data must hold exactly the
    /// shape's element count.
    pub fn new(shape: Vec<usize>, data: ArrayData) -> Result<Array, ArrayError> {
        let dtype = data_dtype(&data);
        let (n, _) = shape_bytes(dtype, &shape)?;
        let found = data_len(&data);
        if n != found {
            return Err(ArrayError::Length {
                shape,
                expected: n,
                found,
            });
        }
        Ok(Array { shape, data })
    }

    /// An array of zeros, or an error when it would exceed the memory
    /// ceiling ([`crate::limits::memory_ceiling`]) or cannot be allocated.
    /// Nothing is allocated before the checks.
    pub fn try_zeros(dtype: DType, shape: &[usize]) -> Result<Array, ArrayError> {
        let (n, bytes) = shape_bytes(dtype, shape)?;
        let memory = |why: String| ArrayError::Memory {
            shape: shape.to_vec(),
            dtype,
            bytes,
            why,
        };
        let ceiling = crate::limits::memory_ceiling().map_err(|e| memory(format!("but {e}")))?;
        if bytes > ceiling {
            return Err(memory(format!(
                "above the memory ceiling of {ceiling} bytes (set TILE_MAX_MEMORY to change it)"
            )));
        }
        let data = match dtype {
            DType::F32 => filled(n, 0.0).map(ArrayData::F32),
            DType::F64 => filled(n, 0.0).map(ArrayData::F64),
            DType::I32 => filled(n, 0).map(ArrayData::I32),
            DType::Bool => filled(n, 0).map(ArrayData::Bool),
        }
        .ok_or_else(|| memory("and the allocation failed".to_string()))?;
        Ok(Array {
            shape: shape.to_vec(),
            data,
        })
    }

    /// An array of zeros.
    ///
    /// # Panics
    /// When [`Array::try_zeros`] fails (a shape too large for memory).
    pub fn zeros(dtype: DType, shape: &[usize]) -> Array {
        match Array::try_zeros(dtype, shape) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    /// Extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements.
    pub fn data(&self) -> &ArrayData {
        &self.data
    }

    /// The elements, taking the array apart.
    pub fn into_data(self) -> ArrayData {
        self.data
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
        data_dtype(&self.data)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        data_len(&self.data)
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

fn data_dtype(d: &ArrayData) -> DType {
    match d {
        ArrayData::F32(_) => DType::F32,
        ArrayData::F64(_) => DType::F64,
        ArrayData::I32(_) => DType::I32,
        ArrayData::Bool(_) => DType::Bool,
    }
}

fn data_len(d: &ArrayData) -> usize {
    match d {
        ArrayData::F32(v) => v.len(),
        ArrayData::F64(v) => v.len(),
        ArrayData::I32(v) => v.len(),
        ArrayData::Bool(v) => v.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_check_the_shape() {
        assert!(Array::new(vec![2, 3], ArrayData::F32(vec![0.0; 5])).is_err());
        assert!(Array::new(vec![2, 3], ArrayData::F32(vec![0.0; 6])).is_ok());
        let huge = vec![1 << 62, 4];
        assert!(matches!(
            Array::new(huge.clone(), ArrayData::F32(vec![])),
            Err(ArrayError::TooLarge(_))
        ));
        assert!(Array::try_zeros(DType::F64, &huge).is_err());
        assert!(Array::try_zeros(DType::F32, &[1 << 40, 1 << 20]).is_err());
    }
}
