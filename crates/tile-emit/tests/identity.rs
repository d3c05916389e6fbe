//! The printer keys failure sites and entry checks on node identity: the
//! same node printed twice shares both, and a copy of a node is a new node.

use tile_emit::{dialect, Printer};
use tile_ir::{parse_program, Expr, Stmt};

const TEXT: &str = "program p(x: in f32[N], y: out f32[N]) {
  for i in 0..N {
    y[i] = x[i] * 2.0 + f32(i / 3)
  }
}";

/// The loop's body.
fn body(program: &tile_ir::Program) -> Vec<Stmt> {
    let Some(Stmt::For { body, .. }) = program.body.first() else {
        panic!("the test program is one loop");
    };
    body.clone()
}

/// The first load in `e`.
fn first_load(e: &Expr) -> Option<&Expr> {
    if matches!(e, Expr::Load { .. }) {
        return Some(e);
    }
    e.children().into_iter().find_map(first_load)
}

#[test]
fn a_checked_level_covers_its_own_nodes_and_no_copy_of_them() {
    let program = parse_program(TEXT).expect("the test program parses");
    let stmts = body(&program);
    let Some(Stmt::Store { value, .. }) = stmts.first() else {
        panic!("the body is one store");
    };
    let load = first_load(value).expect("the store reads x[i]");
    let mut p = Printer::new(&dialect::C, &program);
    p.begin_checked_level("i", "0", "n_N", &stmts, &[]);
    assert!(p.load_checked(load), "the level's own load is checked");
    assert!(
        p.store_checked(&stmts[0]),
        "the level's own store is checked"
    );
    assert!(!p.load_checked(&load.clone()), "a copy is a new node");
    assert!(!p.store_checked(&stmts[0].clone()), "a copy is a new node");
    p.end_checked_level();
    assert!(!p.load_checked(load), "the check ends with its level");
}

#[test]
fn a_node_printed_twice_keeps_its_sites_and_a_copy_gets_new_ones() {
    let program = parse_program(TEXT).expect("the test program parses");
    let stmts = body(&program);
    let mut p = Printer::new(&dialect::C, &program);
    p.bind_loop("i", "i0");
    p.stmts(&stmts);
    p.stmts(&stmts);
    let copy = stmts.clone();
    p.stmts(&copy);
    let printed = p.finish();
    assert!(printed.errors.is_empty(), "{:?}", printed.errors);
    // One store, one load and one division: three sites shared by both
    // printings of the same nodes, three more for the copy.
    let kinds: Vec<&str> = printed.sites.iter().map(|s| s.what).collect();
    assert_eq!(kinds, ["store", "load", "div", "store", "load", "div"]);
    let c = &printed.code;
    for (text, times) in [
        ("TILE_FAIL(1);", 2),
        ("TILE_FAIL(2);", 2),
        ("err, 3)", 2),
        ("TILE_FAIL(4);", 1),
        ("TILE_FAIL(5);", 1),
        ("err, 6)", 1),
    ] {
        assert_eq!(c.matches(text).count(), times, "{text} in\n{c}");
    }
}
