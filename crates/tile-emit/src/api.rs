//! Entry points for target layers that build their own control structure
//! (CUDA row kernels, vectorised element grids): lower one expression, ask
//! its type, and bind a name to C code.

use crate::lower_expr::Ty;
use crate::printer::{Bind, Kind, Printer, VTy};
use tile_ir::Expr;

impl Printer<'_> {
    /// Lowers `e` in the current scope (lines for its temporaries are
    /// printed first) and returns its C code and type.
    pub fn lower(&mut self, e: &Expr) -> (String, VTy) {
        let want = match self.ty(e) {
            Ty::Known(t) => Some(t),
            _ => None,
        };
        let v = self.expr(e, want);
        (v.code, v.ty)
    }

    /// Lowers `e` where a value of type `want` is expected (literals take
    /// that type).
    pub fn lower_as(&mut self, e: &Expr, want: VTy) -> (String, VTy) {
        let v = self.expr(e, Some(want));
        (v.code, v.ty)
    }

    /// The type `e` has in the current scope (literals resolved to the
    /// program's float type or integers).
    pub fn value_type(&self, e: &Expr) -> VTy {
        let t = self.ty(e);
        self.resolve(t, None)
    }

    /// Makes `name` visible as a uniform value held by the C code `code`.
    pub fn bind_value(&mut self, name: &str, code: &str, ty: VTy) {
        self.scope.push(Bind {
            name: name.to_string(),
            code: code.to_string(),
            ty,
            vary: false,
            mw: 0,
            kind: Kind::Value,
        });
    }
}
