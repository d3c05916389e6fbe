//! Visible names and what each is bound to, for walks over a program's
//! nested scopes: one hash per look-up, so a walk stays linear in the
//! number of bindings (the verifier's and the range proof's).

use std::collections::HashMap;

/// Names in the order they were bound (to end scopes with
/// [`Scope::truncate`]) and each name's values, innermost last.
#[derive(Clone, Debug)]
pub struct Scope<T> {
    order: Vec<String>,
    values: HashMap<String, Vec<T>>,
}

impl<T> Default for Scope<T> {
    fn default() -> Self {
        Scope {
            order: Vec::new(),
            values: HashMap::new(),
        }
    }
}

impl<T: Copy> Scope<T> {
    /// Binds `name` to `value`, shadowing any outer binding.
    pub fn push(&mut self, name: String, value: T) {
        self.values.entry(name.clone()).or_default().push(value);
        self.order.push(name);
    }

    /// Number of bindings, to end a scope later with [`Scope::truncate`].
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Drops the bindings made after `len`.
    pub fn truncate(&mut self, len: usize) {
        while self.order.len() > len {
            if let Some(n) = self.order.pop() {
                if let Some(v) = self.values.get_mut(&n) {
                    v.pop();
                    if v.is_empty() {
                        self.values.remove(&n);
                    }
                }
            }
        }
    }

    /// The innermost value of `name`.
    pub fn get(&self, name: &str) -> Option<T> {
        self.values.get(name).and_then(|v| v.last()).copied()
    }
}
