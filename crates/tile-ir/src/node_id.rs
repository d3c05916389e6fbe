//! Node identities: what back ends key failure sites and range checks on.

use std::sync::atomic::{AtomicU64, Ordering};

/// The identity of one load, store or operator node.
///
/// A back end numbers each access's failure site once and remembers which
/// accesses a loop's entry check proved in bounds; it keys both on this
/// identity, so the same node printed twice (a vector loop and its scalar
/// tail) shares its site and check. Every node made gets a new identity,
/// and so does every copy: [`Clone`] draws a fresh one, so a rewritten
/// copy never inherits its original's check, and an identity is never
/// reused within a process. Identities are not values: two nodes compare
/// equal whatever their identities, and `Debug` does not print them, so
/// no output depends on them.
pub struct NodeId(u64);

impl NodeId {
    /// A new identity, distinct from every other in the process.
    pub fn fresh() -> NodeId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NodeId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The identity as a number (a map key).
    pub fn get(&self) -> u64 {
        self.0
    }
}

impl Default for NodeId {
    fn default() -> NodeId {
        NodeId::fresh()
    }
}

impl Clone for NodeId {
    /// A copy of a node is another node: it gets a fresh identity.
    fn clone(&self) -> NodeId {
        NodeId::fresh()
    }
}

impl PartialEq for NodeId {
    /// Identities never make two nodes differ.
    fn eq(&self, _: &NodeId) -> bool {
        true
    }
}

impl std::fmt::Debug for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeId")
    }
}

#[cfg(test)]
mod tests {
    use super::NodeId;

    #[test]
    fn copies_are_new_nodes_that_compare_equal() {
        let a = NodeId::fresh();
        let b = a.clone();
        assert_ne!(a.get(), b.get());
        assert_eq!(a, b);
        assert_eq!(format!("{a:?}"), "NodeId");
    }
}
