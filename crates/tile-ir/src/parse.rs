//! Parser for `.tile` text: recursive descent over the language of
//! docs/guide/language.md.
//!
//! The parser stops at the first problem and returns it as a [`Diagnostic`]
//! naming what was expected and what was found. It never panics: deeply
//! nested input is refused with a diagnostic rather than overflowing the
//! stack.

use crate::lex::{lex, Tok, Token};
use crate::{
    BinOp, DType, Diagnostic, Dim, Expr, Func, LoopVar, Param, Program, ReduceOp, Role, Span, Stmt,
    UnOp,
};

/// Parses a file holding one or more programs.
///
/// An empty file is an error ("expected `program`").
pub fn parse_file(text: &str) -> Result<Vec<Program>, Diagnostic> {
    let mut p = Parser::new(text);
    let mut programs = vec![p.program()?];
    loop {
        p.skip_newlines();
        if p.at(&Tok::Eof) {
            return Ok(programs);
        }
        programs.push(p.program()?);
    }
}

/// Parses text holding exactly one program.
pub fn parse_program(text: &str) -> Result<Program, Diagnostic> {
    let mut p = Parser::new(text);
    let program = p.program()?;
    p.skip_newlines();
    if !p.at(&Tok::Eof) {
        return Err(p.expected("end of input (one program only)"));
    }
    Ok(program)
}

/// Words that cannot name a parameter, variable or program (`inf` and `nan`
/// are reserved too, but the lexer already reads them as literals).
const RESERVED: [&str; 9] = [
    "program", "for", "in", "out", "inout", "if", "else", "true", "false",
];

/// How deeply expressions and blocks may nest before the parser gives up
/// (the verifier's limit, so parsed programs always pass it).
const MAX_DEPTH: usize = crate::verify::MAX_DEPTH;

struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    /// Current nesting of expressions and blocks.
    depth: usize,
    /// The current program's scalar (0-d) parameters: a bare `alpha` loads
    /// one, `loss = e` stores one.
    scalars: Vec<String>,
}

type PResult<T> = Result<T, Diagnostic>;

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            toks: lex(text),
            pos: 0,
            depth: 0,
            scalars: Vec::new(),
        }
    }

    // ----- token helpers -----

    /// The token `n` ahead of the cursor (the final `Eof` past the end).
    fn nth(&self, n: usize) -> &Token<'a> {
        let last = self.toks.len() - 1;
        &self.toks[(self.pos + n).min(last)]
    }

    fn peek(&self) -> &Token<'a> {
        self.nth(0)
    }

    fn at(&self, kind: &Tok) -> bool {
        &self.peek().kind == kind
    }

    /// The current token's spelling when it is an identifier.
    fn word(&self) -> Option<&'a str> {
        let t = self.peek();
        (t.kind == Tok::Ident).then_some(t.text)
    }

    /// True when the current token is the word `word`.
    fn at_word(&self, word: &str) -> bool {
        self.word() == Some(word)
    }

    fn bump(&mut self) -> Token<'a> {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, kind: &Tok) -> bool {
        let hit = self.at(kind);
        if hit {
            self.bump();
        }
        hit
    }

    /// Consumes a `kind` token or fails with "expected `what`, found ...".
    fn expect(&mut self, kind: &Tok, what: &str) -> PResult<Span> {
        if self.at(kind) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{what}`")))
        }
    }

    /// Consumes the word `word` or fails.
    fn expect_word(&mut self, word: &str) -> PResult<Span> {
        if self.at_word(word) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{word}`")))
        }
    }

    /// An "expected X, found Y" diagnostic at the current token (or the
    /// lexer's own message when the current token is a lexical error).
    fn expected(&self, what: &str) -> Diagnostic {
        let t = self.peek();
        match &t.kind {
            Tok::Error(msg) => Diagnostic::new(t.span, msg.clone()),
            _ => Diagnostic::new(t.span, format!("expected {what}, found {t}")),
        }
    }

    /// A non-reserved identifier and its position.
    fn name(&mut self, what: &str) -> PResult<(String, Span)> {
        let t = self.peek();
        if t.kind == Tok::Ident && t.text.starts_with(crate::names::RESERVED_PREFIX) {
            return Err(Diagnostic::new(
                t.span,
                format!(
                    "`{}`: names starting with `{}` are reserved for the names Tile generates",
                    t.text,
                    crate::names::RESERVED_PREFIX
                ),
            ));
        }
        if t.kind == Tok::Ident && !RESERVED.contains(&t.text) {
            let t = self.bump();
            Ok((t.text.to_string(), t.span))
        } else {
            Err(self.expected(what))
        }
    }

    fn skip_newlines(&mut self) {
        while self.eat(&Tok::Newline) {}
    }

    /// Runs `f` one nesting level deeper, refusing absurdly deep input.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::new(
                self.peek().span,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    // ----- programs and parameters -----

    /// `'program' NAME '(' param (',' param)* ')' block`, after any blank lines.
    fn program(&mut self) -> PResult<Program> {
        self.skip_newlines();
        let span = self.expect_word("program")?;
        let (name, _) = self.name("a program name")?;
        self.expect(&Tok::LParen, "(")?;
        let mut params = Vec::new();
        if !self.at(&Tok::RParen) {
            loop {
                params.push(self.param()?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(&Tok::RParen, ")")?;
        self.scalars = params
            .iter()
            .filter(|p| p.dims.is_empty())
            .map(|p| p.name.clone())
            .collect();
        let body = self.block()?;
        Ok(Program {
            name,
            params,
            body,
            span,
        })
    }

    /// `NAME ':' role dtype ('[' dim (',' dim)* ']')?`: without brackets (or
    /// with `[]`) the parameter is a scalar, a 0-d array.
    fn param(&mut self) -> PResult<Param> {
        let (name, span) = self.name("a parameter name")?;
        self.expect(&Tok::Colon, ":")?;
        let role = match self.word() {
            Some("in") => Role::In,
            Some("out") => Role::Out,
            Some("inout") => Role::InOut,
            _ => return Err(self.expected("`in`, `out` or `inout`")),
        };
        self.bump();
        let dtype = self
            .word()
            .and_then(DType::from_name)
            .ok_or_else(|| self.expected("a dtype (f32, f64, i32, bool)"))?;
        self.bump();
        let mut dims = Vec::new();
        if self.eat(&Tok::LBracket) {
            if !self.at(&Tok::RBracket) {
                loop {
                    dims.push(self.dim()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
            }
            self.expect(&Tok::RBracket, "]")?;
        } else if !matches!(self.peek().kind, Tok::Comma | Tok::RParen) {
            return Err(self.expected("`[`, `,` or `)`"));
        }
        Ok(Param {
            name,
            role,
            dtype,
            dims,
            span,
        })
    }

    /// `affine` (extent, from 0) or `affine '..' affine`.
    fn dim(&mut self) -> PResult<Dim> {
        let first = self.expr()?;
        if self.eat(&Tok::DotDot) {
            let hi = self.expr()?;
            Ok(Dim { lo: first, hi })
        } else {
            Ok(Dim::extent(first))
        }
    }

    /// `lo '..' hi`.
    fn range(&mut self) -> PResult<(Expr, Expr)> {
        let lo = self.expr()?;
        self.expect(&Tok::DotDot, "..")?;
        let hi = self.expr()?;
        Ok((lo, hi))
    }

    // ----- statements -----

    /// `'{' stmt* '}'`; statements end at a newline or `;`, and the last one
    /// before `}` needs no terminator.
    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.skip_newlines();
        self.expect(&Tok::LBrace, "{")?;
        self.nested(|p| {
            let mut body = Vec::new();
            loop {
                while p.eat(&Tok::Newline) || p.eat(&Tok::Semi) {}
                if p.eat(&Tok::RBrace) {
                    return Ok(body);
                }
                body.push(p.stmt()?);
                if !matches!(p.peek().kind, Tok::Newline | Tok::Semi | Tok::RBrace) {
                    return Err(p.expected("a newline or `;` after the statement"));
                }
            }
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        if self.at_word("for") {
            return self.for_stmt();
        }
        if self.at_word("if") {
            return self.if_stmt();
        }
        if self.at(&Tok::Eof) {
            return Err(self.expected("`}`"));
        }
        let (name, span) = self.name("a statement")?;
        match self.peek().kind {
            Tok::Assign if self.scalars.contains(&name) => {
                self.bump();
                let value = self.expr()?;
                Ok(Stmt::store(name, Vec::new(), value, span))
            }
            Tok::Assign => {
                self.bump();
                let value = self.expr()?;
                Ok(Stmt::Let { name, value, span })
            }
            Tok::LBracket => {
                self.bump();
                let idx = self.list(&Tok::RBracket, "]")?;
                self.expect(&Tok::Assign, "=")?;
                let value = self.expr()?;
                Ok(Stmt::store(name, idx, value, span))
            }
            _ => Err(self.expected("`=` or `[`")),
        }
    }

    /// `'for' NAME 'in' range (',' NAME 'in' range)* block`.
    fn for_stmt(&mut self) -> PResult<Stmt> {
        let span = self.expect_word("for")?;
        let mut vars = Vec::new();
        loop {
            let (name, _) = self.name("a loop variable")?;
            self.expect_word("in")?;
            let (lo, hi) = self.range()?;
            vars.push(LoopVar { name, lo, hi });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let body = self.block()?;
        Ok(Stmt::For { vars, body, span })
    }

    /// `'if' expr block ('else' (block | if))?`.
    fn if_stmt(&mut self) -> PResult<Stmt> {
        let span = self.expect_word("if")?;
        let cond = self.expr()?;
        let then = self.block()?;
        // `else` may start the next line: no statement begins with it.
        let mut ahead = 0;
        while self.nth(ahead).kind == Tok::Newline {
            ahead += 1;
        }
        let next = self.nth(ahead);
        let els = if next.kind == Tok::Ident && next.text == "else" {
            self.pos += ahead;
            self.bump();
            if self.at_word("if") {
                vec![self.nested(Self::if_stmt)?]
            } else {
                self.block()?
            }
        } else {
            Vec::new()
        };
        Ok(Stmt::If {
            cond,
            then,
            els,
            span,
        })
    }

    // ----- expressions -----

    /// A comma-separated list of expressions up to (and consuming) `close`.
    /// The opening bracket has been consumed.
    fn list(&mut self, close: &Tok, close_text: &str) -> PResult<Vec<Expr>> {
        let mut items = Vec::new();
        if !self.at(close) {
            loop {
                items.push(self.expr()?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(close, close_text)?;
        Ok(items)
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.nested(|p| p.binary(1))
    }

    fn peek_binop(&self) -> Option<BinOp> {
        Some(match self.peek().kind {
            Tok::OrOr => BinOp::Or,
            Tok::AndAnd => BinOp::And,
            Tok::Lt => BinOp::Lt,
            Tok::Le => BinOp::Le,
            Tok::Gt => BinOp::Gt,
            Tok::Ge => BinOp::Ge,
            Tok::EqEq => BinOp::Eq,
            Tok::Ne => BinOp::Ne,
            Tok::Plus => BinOp::Add,
            Tok::Minus => BinOp::Sub,
            Tok::Star => BinOp::Mul,
            Tok::Slash => BinOp::Div,
            Tok::Percent => BinOp::Rem,
            _ => return None,
        })
    }

    /// Precedence climbing: operators binding at least as tightly as
    /// `min_prec`, left-associative; comparisons do not chain. Each
    /// operator of a chain deepens the tree by one level, so each counts
    /// against the nesting limit like a parenthesis.
    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let base = self.depth;
        let r = self.chain(min_prec);
        self.depth = base;
        r
    }

    fn chain(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        let mut compared = false;
        while let Some(op) = self.peek_binop() {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            let op_tok = self.bump();
            if compared && op.is_comparison() {
                return Err(Diagnostic::new(
                    op_tok.span,
                    format!(
                        "comparison operators cannot be chained: \
                         parenthesise one side of `{}`",
                        op.symbol()
                    ),
                ));
            }
            compared = op.is_comparison();
            if self.depth >= MAX_DEPTH {
                return Err(Diagnostic::new(
                    op_tok.span,
                    format!(
                        "expression nested deeper than {MAX_DEPTH} levels (each operator of a chain counts); split it with bindings"
                    ),
                ));
            }
            self.depth += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    /// Prefix `-` and `!`; `-` directly before a numeric literal makes a
    /// negative literal.
    fn unary(&mut self) -> PResult<Expr> {
        match self.peek().kind {
            Tok::Minus => {
                self.bump();
                match self.peek().kind {
                    Tok::Int(v) => {
                        let t = self.bump();
                        // The magnitude of i64::MIN is one more than i64::MAX.
                        match 0i64.checked_sub_unsigned(v) {
                            Some(n) => Ok(Expr::Int(n)),
                            None => Err(too_large(&t)),
                        }
                    }
                    Tok::Float(v) => {
                        self.bump();
                        Ok(Expr::Float(-v))
                    }
                    _ => {
                        let e = self.nested(Self::unary)?;
                        Ok(Expr::Unary(UnOp::Neg, Box::new(e)))
                    }
                }
            }
            Tok::Bang => {
                self.bump();
                let e = self.nested(Self::unary)?;
                Ok(Expr::Unary(UnOp::Not, Box::new(e)))
            }
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        match t.kind {
            Tok::Int(v) => {
                self.bump();
                i64::try_from(v).map(Expr::Int).map_err(|_| too_large(&t))
            }
            Tok::Float(v) => {
                self.bump();
                Ok(Expr::Float(v))
            }
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(&Tok::RParen, ")")?;
                Ok(e)
            }
            Tok::Ident if t.text == "true" || t.text == "false" => {
                self.bump();
                Ok(Expr::Bool(t.text == "true"))
            }
            Tok::Ident if !RESERVED.contains(&t.text) => {
                self.bump();
                let name = t.text.to_string();
                match self.peek().kind {
                    Tok::LBracket => {
                        self.bump();
                        let idx = self.list(&Tok::RBracket, "]")?;
                        Ok(Expr::load(&name, idx))
                    }
                    Tok::LParen => self.call(&t),
                    _ if self.scalars.contains(&name) => Ok(Expr::load(&name, Vec::new())),
                    _ => Ok(Expr::Var(name)),
                }
            }
            _ => Err(self.expected("an expression")),
        }
    }

    /// A call or reduction; the cursor is on the `(` after `name`.
    fn call(&mut self, name: &Token<'a>) -> PResult<Expr> {
        let reduce = match name.text {
            "sum" => Some(ReduceOp::Sum),
            "max" => Some(ReduceOp::Max),
            "min" => Some(ReduceOp::Min),
            _ => None,
        };
        let is_reduce_form = self.nth(1).kind == Tok::Ident
            && self.nth(2).kind == Tok::Ident
            && self.nth(2).text == "in";
        if let Some(op) = reduce.filter(|_| is_reduce_form) {
            self.bump();
            let (var, _) = self.name("a reduction variable")?;
            self.expect_word("in")?;
            let (lo, hi) = self.range()?;
            self.expect(&Tok::Colon, ":")?;
            let body = self.expr()?;
            self.expect(&Tok::RParen, ")")?;
            return Ok(Expr::Reduce {
                op,
                var,
                lo: Box::new(lo),
                hi: Box::new(hi),
                body: Box::new(body),
            });
        }
        let func = match name.text {
            "neg" => None,
            "sum" => {
                return Err(Diagnostic::new(
                    name.span,
                    "`sum` is a reduction: write `sum(NAME in lo..hi: expr)`",
                ))
            }
            other => Some(Func::from_name(other).ok_or_else(|| {
                Diagnostic::new(name.span, format!("unknown function `{other}`"))
            })?),
        };
        self.bump();
        let args = self.nested(|p| p.list(&Tok::RParen, ")"))?;
        let arity = func.map_or(1, Func::arity);
        let found = args.len();
        let wrong_arity = || {
            let plural = if arity == 1 { "" } else { "s" };
            Diagnostic::new(
                name.span,
                format!(
                    "`{}` takes {arity} argument{plural}, found {found}",
                    name.text
                ),
            )
        };
        match func {
            Some(f) if found == arity => Ok(Expr::Call(f, args)),
            Some(_) => Err(wrong_arity()),
            None => {
                let [x] = <[Expr; 1]>::try_from(args).map_err(|_| wrong_arity())?;
                Ok(Expr::Unary(UnOp::Neg, Box::new(x)))
            }
        }
    }
}

fn too_large(t: &Token<'_>) -> Diagnostic {
    Diagnostic::new(t.span, format!("integer literal `{}` is too large", t.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Expr {
        let src = format!("program p(x: in f32[N]) {{ v = {text} }}");
        match parse_program(&src) {
            Ok(p) => match p.body.into_iter().next() {
                Some(Stmt::Let { value, .. }) => value,
                other => panic!("unexpected body {other:?}"),
            },
            Err(d) => panic!("{text}: {d}"),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        use BinOp::*;
        let (a, b, c) = (Expr::var("a"), Expr::var("b"), Expr::var("c"));
        assert_eq!(
            expr("a - b - c"),
            Expr::binary(Sub, Expr::binary(Sub, a.clone(), b.clone()), c.clone())
        );
        assert_eq!(
            expr("a + b * c"),
            Expr::binary(Add, a.clone(), Expr::binary(Mul, b.clone(), c.clone()))
        );
        assert_eq!(
            expr("a || b && c"),
            Expr::binary(Or, a.clone(), Expr::binary(And, b.clone(), c.clone()))
        );
        assert_eq!(
            expr("a < b + c && !c"),
            Expr::binary(
                And,
                Expr::binary(Lt, a.clone(), Expr::binary(Add, b, c.clone())),
                Expr::Unary(UnOp::Not, Box::new(c))
            )
        );
        assert_eq!(expr("-a"), Expr::Unary(UnOp::Neg, Box::new(a.clone())));
        assert_eq!(expr("neg(a)"), Expr::Unary(UnOp::Neg, Box::new(a)));
    }

    #[test]
    fn negative_literals() {
        assert_eq!(expr("-1.0"), Expr::Float(-1.0));
        assert_eq!(expr("-3"), Expr::Int(-3));
        assert_eq!(expr("-9223372036854775808"), Expr::Int(i64::MIN));
        assert_eq!(expr("-inf"), Expr::Float(f64::NEG_INFINITY));
        assert_eq!(
            expr("-(1.0)"),
            Expr::Unary(UnOp::Neg, Box::new(Expr::Float(1.0)))
        );
        assert!(parse_program("program p(x: in f32[N]) { v = 9223372036854775808 }").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!(
            "program p(x: in f32[N]) {{ v = {}1{} }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        let err = parse_program(&src).unwrap_err();
        assert!(err.message.contains("nesting"), "{err}");
        let src = format!("program p(x: in f32[N]) {{ v = {}1 }}", "-!".repeat(10_000));
        assert!(parse_program(&src).is_err());
        // Long operator chains are as deep as their length.
        let src = format!(
            "program p(x: in f32[N]) {{ v = 1.0{} }}",
            " + 1.0".repeat(25_000)
        );
        let err = parse_program(&src).unwrap_err();
        assert!(err.message.contains("nested deeper"), "{err}");
        let src = format!(
            "program p(x: in f32[N]) {{ v = 1.0{} }}",
            " + 1.0".repeat(150)
        );
        parse_program(&src).unwrap();
        // Parentheses and chains add up.
        let inner = format!("(1.0{})", " * 1.0".repeat(120));
        let src = format!(
            "program p(x: in f32[N]) {{ v = {}{inner}{} }}",
            "(".repeat(100),
            ")".repeat(100)
        );
        assert!(parse_program(&src).is_err());
    }

    #[test]
    fn generated_names_are_reserved() {
        for src in [
            "program p(__scr0: in f32[N]) { }",
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { __tile_0 = x[i]; y[i] = __tile_0 } }",
        ] {
            let err = parse_program(src).unwrap_err();
            assert!(err.message.contains("reserved"), "{err}");
        }
    }
}
