//! The printer's state: output lines, temporaries named by kind, the scope
//! of visible names, the vector context and the current lane mask.
//!
//! Lowering itself lives in `lower_expr.rs` (expressions), `access.rs`
//! (loads, stores and bounds checks) and `control.rs` (statements, loops,
//! reductions); this file owns naming, so every part spells a parameter,
//! size symbol or loop variable the same way.

use crate::dialect::Dialect;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use tile_ir::{DType, Expr, Param, ParamIndex, Program};

/// The type of a value in generated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VTy {
    /// `f32` values.
    F32,
    /// `f64` values.
    F64,
    /// Integers (`i32` in the IR, 64-bit in generated code).
    Int,
    /// Booleans (masks when varying).
    Bool,
}

impl VTy {
    /// The value type of a buffer element or IR type.
    pub fn of(d: DType) -> VTy {
        match d {
            DType::F32 => VTy::F32,
            DType::F64 => VTy::F64,
            DType::I32 => VTy::Int,
            DType::Bool => VTy::Bool,
        }
    }

    /// True for `F32` and `F64`.
    pub fn is_float(self) -> bool {
        matches!(self, VTy::F32 | VTy::F64)
    }

    /// The lane width in bytes of a mask produced by comparing values of
    /// this type.
    pub fn mask_width(self) -> u8 {
        match self {
            VTy::F32 => 4,
            _ => 8,
        }
    }
}

/// A lowered value: C code that names or computes it, its type, and
/// whether it varies across the lanes of the vector context.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub code: String,
    pub ty: VTy,
    /// A vector (one value per lane) rather than a scalar.
    pub vary: bool,
    /// Lane width in bytes of a varying boolean (a mask): 4 or 8.
    pub mw: u8,
    /// A literal constant (scalars combine with vectors without a splat).
    pub lit: bool,
}

impl Val {
    pub fn uni(code: String, ty: VTy) -> Val {
        Val {
            code,
            ty,
            vary: false,
            mw: 0,
            lit: false,
        }
    }

    pub fn lit(code: String, ty: VTy) -> Val {
        Val {
            lit: true,
            ..Val::uni(code, ty)
        }
    }

    pub fn vec(code: String, ty: VTy, mw: u8) -> Val {
        Val {
            code,
            ty,
            vary: true,
            mw,
            lit: false,
        }
    }
}

/// What a visible name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A size symbol (constant for the whole launch).
    Size,
    /// A loop or reduction variable.
    Loop,
    /// A binding.
    Value,
}

/// A visible name.
#[derive(Clone, Debug)]
pub(crate) struct Bind {
    pub name: String,
    pub code: String,
    pub ty: VTy,
    pub vary: bool,
    pub mw: u8,
    pub kind: Kind,
}

/// The loop whose iterations are the lanes of the current vectors.
#[derive(Clone, Debug)]
pub(crate) struct VecCtx {
    /// The IR name of the vectorised variable.
    pub var: String,
    /// C name of the scalar holding lane 0's value.
    pub base: String,
}

/// The lanes that are active under varying conditions.
#[derive(Clone, Debug)]
pub(crate) struct Mask {
    pub code: String,
    pub mw: u8,
}

/// One load, store or integer division whose failure a kernel reports:
/// generated code writes `index + 1` into the error word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The buffer accessed (empty for a division).
    pub buf: String,
    /// Source line of the statement.
    pub line: u32,
    /// `load`, `store` or `div`.
    pub what: &'static str,
}

/// What printing one kernel produced.
#[derive(Clone, Debug)]
pub struct Printed {
    /// The kernel's C text.
    pub code: String,
    /// Helper functions the text calls (target libraries define them).
    pub helpers: BTreeSet<String>,
    /// Failure sites, numbered from 1 in the text.
    pub sites: Vec<Site>,
    /// Problems that make the kernel unprintable (empty on success).
    pub errors: Vec<String>,
}

/// Prints one kernel's statements as C-like text in a [`Dialect`].
pub struct Printer<'a> {
    pub(crate) d: &'a Dialect,
    pub(crate) program: &'a Program,
    /// `program`'s parameters by name and size symbols: shared by the
    /// kernels of one program ([`Printer::with_index`]) so that printing
    /// each costs its own size, not the program's.
    index: Cow<'a, ParamIndex>,
    /// Parameters of this kernel alone ([`Printer::add_params`]: scratch
    /// rows), looked up before the program's.
    extra: Vec<Param>,
    out: String,
    indent: usize,
    counters: BTreeMap<&'static str, u32>,
    pub(crate) scope: Vec<Bind>,
    pub(crate) vec: Option<VecCtx>,
    pub(crate) mask: Option<Mask>,
    helpers: BTreeSet<String>,
    sites: Vec<Site>,
    site_base: u32,
    /// Failure sites by node identity ([`tile_ir::NodeId`]).
    site_ids: HashMap<u64, u32>,
    /// Accesses proven in bounds by the check at the entry of an enclosing
    /// loop level, by node identity (used for lookups only).
    pub(crate) prechecked: Vec<HashSet<u64>>,
    pub(crate) line_no: u32,
    /// The `for` loops of the body that run as vector lanes: the lowered
    /// kernel's decision ([`tile_plan::kernel_ir::LoweredKernel::loops`]);
    /// every other loop runs one iteration at a time.
    pub lane_loops: BTreeSet<tile_plan::kernel_ir::LoopKey>,
    /// Vector accumulators of a uniform reduction's first loop (the
    /// lowered kernel's [`tile_plan::kernel_ir::Reassociation`]; below 2,
    /// one vector loop).
    pub accumulators: usize,
    /// Lane width in bytes of masks loaded from `bool` buffers.
    pub(crate) mw_default: u8,
    errors: Vec<String>,
}

impl<'a> Printer<'a> {
    /// A printer for kernels of `program`.
    pub fn new(d: &'a Dialect, program: &'a Program) -> Self {
        Printer::with(d, program, Cow::Owned(ParamIndex::of(program)))
    }

    /// A printer for kernels of `program`, which is the program `index`
    /// was built from, or that program with parameters appended (a
    /// kernel's scratch rows).
    pub fn with_index(d: &'a Dialect, program: &'a Program, index: &'a ParamIndex) -> Self {
        Printer::with(d, program, Cow::Borrowed(index))
    }

    fn with(d: &'a Dialect, program: &'a Program, index: Cow<'a, ParamIndex>) -> Self {
        let mw_default = VTy::of(program.float_type()).mask_width();
        Printer {
            d,
            program,
            index,
            extra: Vec::new(),
            out: String::new(),
            indent: 0,
            counters: BTreeMap::new(),
            scope: Vec::new(),
            vec: None,
            mask: None,
            helpers: BTreeSet::new(),
            sites: Vec::new(),
            site_base: 0,
            site_ids: HashMap::new(),
            prechecked: Vec::new(),
            line_no: 0,
            lane_loops: BTreeSet::new(),
            accumulators: 1,
            mw_default,
            errors: Vec::new(),
        }
    }

    /// Adds parameters of this kernel alone (its scratch rows), which
    /// accesses then resolve like the program's.
    pub fn add_params(&mut self, params: Vec<Param>) {
        self.extra.extend(params);
    }

    /// The parameter `name` (a scratch row included).
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.extra
            .iter()
            .find(|p| p.name == name)
            .or_else(|| self.index.param(self.program, name))
    }

    /// The program's size symbols, in the order targets pass their values.
    pub fn size_symbols(&self) -> &[String] {
        self.index.symbols()
    }

    /// Everything printed so far.
    pub fn finish(self) -> Printed {
        Printed {
            code: self.out,
            helpers: self.helpers,
            sites: self.sites,
            errors: self.errors,
        }
    }

    // ---- output ----

    /// Appends one line at the current indentation.
    pub fn line(&mut self, s: impl AsRef<str>) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    /// Appends `s {` and indents.
    pub fn open(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        if s.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{s} {{"));
        }
        self.indent += 1;
    }

    /// Closes a block opened with [`Printer::open`].
    pub fn close(&mut self) {
        self.indent = self.indent.saturating_sub(1);
        self.line("}");
    }

    /// A fresh temporary of `kind` (`ld0`, `alu1`, `val2`, ...).
    pub fn tmp(&mut self, kind: &'static str) -> String {
        let n = self.counters.entry(kind).or_insert(0);
        let s = format!("{kind}{n}");
        *n += 1;
        s
    }

    /// Records a helper the text calls and returns its name.
    pub(crate) fn helper(&mut self, name: String) -> String {
        self.helpers.insert(name.clone());
        name
    }

    /// Records a problem a target layer found (a step it cannot print);
    /// the kernel is then reported unprintable.
    pub fn refuse(&mut self, msg: String) {
        self.error(msg);
    }

    /// Records a problem; the kernel is then reported unprintable.
    pub(crate) fn error(&mut self, msg: String) {
        if !self.errors.contains(&msg) {
            self.errors.push(msg);
        }
    }

    /// The failure id of an access or division: one per node identity, so
    /// a node printed twice reports the same site.
    pub(crate) fn site(&mut self, node: u64, buf: &str, what: &'static str) -> u32 {
        if let Some(&id) = self.site_ids.get(&node) {
            return id;
        }
        let id = self.push_site(buf, what);
        self.site_ids.insert(node, id);
        id
    }

    /// Appends a site at the current line and returns its id.
    pub(crate) fn push_site(&mut self, buf: &str, what: &'static str) -> u32 {
        self.sites.push(Site {
            buf: buf.to_string(),
            line: self.line_no,
            what,
        });
        self.site_base + self.sites.len() as u32
    }

    /// Numbers this kernel's failure sites from `base + 1` (targets with
    /// one failure word for several kernels or entry points keep their ids
    /// apart this way); [`Printed::sites`] stays indexed from 0.
    pub fn set_site_base(&mut self, base: u32) {
        self.site_base = base;
    }

    /// The base set by [`Printer::set_site_base`].
    pub fn site_base(&self) -> u32 {
        self.site_base
    }

    // ---- names ----

    /// C name of a parameter's data pointer.
    pub fn ptr_name(buf: &str) -> String {
        format!("p_{buf}")
    }

    /// C name of a size symbol.
    pub fn size_name(sym: &str) -> String {
        format!("s_{sym}")
    }

    /// C name of a loop variable.
    pub fn var_name(v: &str) -> String {
        format!("v_{v}")
    }

    /// C code for the lowest index of dimension `d` of `buf`'s box (`0`
    /// when the box starts at zero, else the name of a constant).
    pub fn box_lo(&self, buf: &str, d: usize) -> String {
        let zero = self
            .param(buf)
            .and_then(|p| p.dims.get(d))
            .is_some_and(|dim| dim.lo == Expr::Int(0));
        if zero {
            "0".to_string()
        } else {
            format!("lo{d}_{buf}")
        }
    }

    /// C name of the extent of dimension `d` of `buf`'s box.
    pub fn box_n(buf: &str, d: usize) -> String {
        format!("n{d}_{buf}")
    }

    /// C code of an integer expression over size symbols (box bounds and
    /// kernel domains).
    pub fn size_expr(&self, e: &Expr) -> String {
        use tile_ir::{BinOp, UnOp};
        match e {
            Expr::Int(v) => self.d.syntax.int_lit(*v),
            Expr::Var(n) => Self::size_name(n),
            Expr::Unary(UnOp::Neg, a) => format!("(-{})", self.size_expr(a)),
            // Size expressions are evaluated on the host with checked
            // arithmetic before any launch (`tile_ir::args`), so a zero
            // divisor never reaches this code.
            Expr::Binary(
                op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem),
                a,
                b,
                _,
            ) => {
                format!(
                    "({} {} {})",
                    self.size_expr(a),
                    op.symbol(),
                    self.size_expr(b)
                )
            }
            other => format!("/* unsupported size expression {other} */ 0"),
        }
    }

    // ---- scope ----

    /// Makes a size symbol visible (its C name holds its value).
    pub fn bind_size(&mut self, sym: &str) {
        self.scope.push(Bind {
            name: sym.to_string(),
            code: Self::size_name(sym),
            ty: VTy::Int,
            vary: false,
            mw: 0,
            kind: Kind::Size,
        });
    }

    /// Makes a scalar loop variable visible under `code`.
    pub fn bind_loop(&mut self, name: &str, code: &str) {
        self.scope.push(Bind {
            name: name.to_string(),
            code: code.to_string(),
            ty: VTy::Int,
            vary: false,
            mw: 0,
            kind: Kind::Loop,
        });
    }

    /// Number of visible names (restore with [`Printer::truncate_scope`]).
    pub fn scope_len(&self) -> usize {
        self.scope.len()
    }

    /// Drops names bound after `len`.
    pub fn truncate_scope(&mut self, len: usize) {
        self.scope.truncate(len);
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<&Bind> {
        self.scope.iter().rev().find(|b| b.name == name)
    }

    /// Sets the source line that failure sites report.
    pub fn set_line(&mut self, line: u32) {
        self.line_no = line;
    }

    // ---- types ----

    /// The scalar C type of a value type.
    pub fn scalar_type(&self, t: VTy) -> &'static str {
        match t {
            VTy::F32 => self.d.f32,
            VTy::F64 => self.d.f64,
            VTy::Int => self.d.int,
            VTy::Bool => self.d.bool_,
        }
    }

    /// The vector C type of a value type (`mw` for masks).
    pub(crate) fn vector_type(&self, t: VTy, mw: u8) -> &'static str {
        let Some(v) = &self.d.vector else {
            return "void";
        };
        match t {
            VTy::F32 => v.f32,
            VTy::F64 => v.f64,
            VTy::Int => v.int,
            VTy::Bool => {
                if mw == 8 {
                    v.mask8
                } else {
                    v.mask4
                }
            }
        }
    }

    /// The C type of a value.
    pub(crate) fn type_of(&self, v: &Val) -> &'static str {
        if v.vary {
            self.vector_type(v.ty, v.mw)
        } else {
            self.scalar_type(v.ty)
        }
    }

    /// The helper-name suffix of a type: `f32`, `i64`, `vf32`, `vm4`, ...
    pub(crate) fn suffix(t: VTy, vary: bool, mw: u8) -> &'static str {
        match (t, vary) {
            (VTy::F32, false) => "f32",
            (VTy::F64, false) => "f64",
            (VTy::Int, false) => "i64",
            (VTy::Bool, false) => "b",
            (VTy::F32, true) => "vf32",
            (VTy::F64, true) => "vf64",
            (VTy::Int, true) => "vi64",
            (VTy::Bool, true) => {
                if mw == 8 {
                    "vm8"
                } else {
                    "vm4"
                }
            }
        }
    }

    /// The vector lane count expression.
    pub(crate) fn lanes(&self) -> &'static str {
        self.d.vector.as_ref().map_or("1", |v| v.lanes)
    }

    /// A float literal of type `t`.
    pub(crate) fn float_lit(&self, x: f64, t: VTy) -> String {
        if t == VTy::F32 {
            let v = x as f32;
            if v.is_nan() {
                self.d.f32_nan.to_string()
            } else if v.is_infinite() {
                if v > 0.0 {
                    self.d.f32_inf.to_string()
                } else {
                    format!("(-{})", self.d.f32_inf)
                }
            } else {
                let s = format!("{v:?}{}", self.d.f32_suffix);
                if v.is_sign_negative() {
                    format!("({s})")
                } else {
                    s
                }
            }
        } else if x.is_nan() {
            self.d.f64_nan.to_string()
        } else if x.is_infinite() {
            if x > 0.0 {
                self.d.f64_inf.to_string()
            } else {
                format!("(-{})", self.d.f64_inf)
            }
        } else {
            let s = format!("{x:?}{}", self.d.f64_suffix);
            if x.is_sign_negative() {
                format!("({s})")
            } else {
                s
            }
        }
    }
}
