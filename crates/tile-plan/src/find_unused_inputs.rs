//! `find_unused_inputs`: inputs that no statement reads.
//!
//! After simplification an `in` parameter that is never loaded cannot affect
//! any output; it is listed in the plan and left out of every kernel's
//! signature (callers may still pass it; it is checked but not touched).

use std::collections::BTreeSet;
use tile_ir::{Expr, Program, Role};

/// Names of `in` parameters that no expression loads, in declaration order.
pub fn find_unused_inputs(program: &Program) -> Vec<String> {
    let mut read: BTreeSet<String> = BTreeSet::new();
    program.walk(&mut |s| {
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Load { buf, .. } = x {
                    if !read.contains(buf) {
                        read.insert(buf.clone());
                    }
                }
            })
        });
    });
    program
        .params
        .iter()
        .filter(|p| p.role == Role::In && !read.contains(&p.name))
        .map(|p| p.name.clone())
        .collect()
}
