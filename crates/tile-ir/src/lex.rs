//! Lexer for `.tile` text: turns source into tokens with 1-based positions.
//!
//! Newlines are statement terminators, except inside an open `(` or `[`,
//! where they are whitespace so that parameter lists and call arguments may
//! span lines. `#` starts a comment that runs to the end of the line. The
//! words `inf` and `nan` are float literals.
//!
//! The lexer never fails: the first bad character (or an out-of-range
//! literal) becomes a [`Tok::Error`] token, followed only by [`Tok::Eof`].
//! The parser reports it when it reaches it, so the diagnostic the user sees
//! is always the first problem in the text.

use crate::Span;
use std::fmt;

/// The kind of a token (an identifier's spelling is in [`Token::text`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_]*`, keywords included.
    Ident,
    /// An integer literal, unsigned: the parser applies a leading `-`, which
    /// lets `-9223372036854775808` be read.
    Int(u64),
    /// A float literal (`1.5`, `1.`, `1e-5`, `inf`, `nan`).
    Float(f64),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `;`
    Semi,
    /// `=`
    Assign,
    /// `..`
    DotDot,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// `!`
    Bang,
    /// A line break outside brackets: ends a statement.
    Newline,
    /// End of the text.
    Eof,
    /// A lexical error with its message; only `Eof` follows it.
    Error(String),
}

/// A token with its spelling and where it starts.
#[derive(Clone, Debug)]
pub(crate) struct Token<'a> {
    /// What it is.
    pub kind: Tok,
    /// The source text it was read from (empty for `Eof`).
    pub text: &'a str,
    /// Line and column of its first character.
    pub span: Span,
}

impl fmt::Display for Token<'_> {
    /// Describes the token for "found ..." in diagnostics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Tok::Newline => f.write_str("a newline"),
            Tok::Eof => f.write_str("end of input"),
            Tok::Error(msg) => f.write_str(msg),
            _ => write!(f, "`{}`", self.text),
        }
    }
}

/// Splits `src` into tokens. The last token is always `Eof`.
pub(crate) fn lex(src: &str) -> Vec<Token<'_>> {
    Lexer::new(src).run()
}

/// Lexer state: a cursor over the source and the stack of open brackets.
struct Lexer<'a> {
    src: &'a str,
    /// Byte offset of the next character.
    pos: usize,
    line: u32,
    col: u32,
    /// Open `(`, `[` and `{`, innermost last; newlines are whitespace while
    /// the innermost is `(` or `[`.
    open: Vec<char>,
    out: Vec<Token<'a>>,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Lexer {
            src,
            pos: 0,
            line: 1,
            col: 1,
            open: Vec::new(),
            out: Vec::new(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        let mut it = self.src[self.pos..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn in_brackets(&self) -> bool {
        matches!(self.open.last(), Some('(' | '['))
    }

    fn push(&mut self, kind: Tok, start: usize, span: Span) {
        self.out.push(Token {
            kind,
            text: &self.src[start..self.pos],
            span,
        });
    }

    fn run(mut self) -> Vec<Token<'a>> {
        loop {
            let span = Span::new(self.line, self.col);
            let start = self.pos;
            let Some(c) = self.bump() else {
                self.push(Tok::Eof, start, span);
                return self.out;
            };
            let kind = match c {
                '\n' if self.in_brackets() => continue,
                '\n' => Tok::Newline,
                c if c.is_whitespace() => continue,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                    continue;
                }
                c if c.is_ascii_alphabetic() || c == '_' => {
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.bump();
                    }
                    match &self.src[start..self.pos] {
                        "inf" => Tok::Float(f64::INFINITY),
                        "nan" => Tok::Float(f64::NAN),
                        _ => Tok::Ident,
                    }
                }
                c if c.is_ascii_digit() => self.number(start),
                '(' | '[' | '{' => {
                    self.open.push(c);
                    match c {
                        '(' => Tok::LParen,
                        '[' => Tok::LBracket,
                        _ => Tok::LBrace,
                    }
                }
                ')' | ']' | '}' => {
                    let (opener, kind) = match c {
                        ')' => ('(', Tok::RParen),
                        ']' => ('[', Tok::RBracket),
                        _ => ('{', Tok::RBrace),
                    };
                    if self.open.last() == Some(&opener) {
                        self.open.pop();
                    }
                    kind
                }
                ',' => Tok::Comma,
                ':' => Tok::Colon,
                ';' => Tok::Semi,
                '+' => Tok::Plus,
                '-' => Tok::Minus,
                '*' => Tok::Star,
                '/' => Tok::Slash,
                '%' => Tok::Percent,
                '.' if self.peek() == Some('.') => {
                    self.bump();
                    Tok::DotDot
                }
                '=' => self.pair('=', Tok::EqEq, Some(Tok::Assign)),
                '<' => self.pair('=', Tok::Le, Some(Tok::Lt)),
                '>' => self.pair('=', Tok::Ge, Some(Tok::Gt)),
                '!' => self.pair('=', Tok::Ne, Some(Tok::Bang)),
                '&' => self.pair('&', Tok::AndAnd, None),
                '|' => self.pair('|', Tok::OrOr, None),
                _ => Tok::Error(format!("unexpected character `{c}`")),
            };
            let stop = matches!(kind, Tok::Error(_));
            self.push(kind, start, span);
            if stop {
                let span = Span::new(self.line, self.col);
                self.push(Tok::Eof, self.pos, span);
                return self.out;
            }
        }
    }

    /// A one- or two-character operator: `two` when the next character is
    /// `second`, else `one` (or an error when the first character alone is
    /// not a token).
    fn pair(&mut self, second: char, two: Tok, one: Option<Tok>) -> Tok {
        if self.peek() == Some(second) {
            self.bump();
            return two;
        }
        one.unwrap_or_else(|| {
            let first = &self.src[self.pos - 1..self.pos];
            Tok::Error(format!("unexpected character `{first}`"))
        })
    }

    /// The rest of a numeric literal whose first digit has been read.
    fn number(&mut self, start: usize) -> Tok {
        self.digits();
        let mut is_float = false;
        // `1.5` and `1.`, but `0..M` is an integer followed by `..`.
        if self.peek() == Some('.') && self.peek2() != Some('.') {
            self.bump();
            self.digits();
            is_float = true;
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let rest = &self.src[self.pos + 1..];
            let sign = usize::from(rest.starts_with(['+', '-']));
            if rest[sign..].starts_with(|c: char| c.is_ascii_digit()) {
                for _ in 0..=sign {
                    self.bump();
                }
                self.digits();
                is_float = true;
            }
        }
        let text = &self.src[start..self.pos];
        if is_float {
            match text.parse::<f64>() {
                Ok(v) => Tok::Float(v),
                Err(_) => Tok::Error(format!("invalid float literal `{text}`")),
            }
        } else {
            match text.parse::<u64>() {
                Ok(v) => Tok::Int(v),
                Err(_) => Tok::Error(format!("integer literal `{text}` is too large")),
            }
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn ranges_and_floats() {
        assert_eq!(
            kinds("0..M 1.5 2. 1e-5 2.5E+3 1.5..2 1.e2 2e"),
            vec![
                Tok::Int(0),
                Tok::DotDot,
                Tok::Ident,
                Tok::Float(1.5),
                Tok::Float(2.0),
                Tok::Float(1e-5),
                Tok::Float(2500.0),
                Tok::Float(1.5),
                Tok::DotDot,
                Tok::Int(2),
                Tok::Float(100.0),
                Tok::Int(2),
                Tok::Ident,
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn operators_and_words() {
        assert_eq!(
            kinds("a<=b>=c==d!=e&&f||!g<h>i=inf"),
            vec![
                Tok::Ident,
                Tok::Le,
                Tok::Ident,
                Tok::Ge,
                Tok::Ident,
                Tok::EqEq,
                Tok::Ident,
                Tok::Ne,
                Tok::Ident,
                Tok::AndAnd,
                Tok::Ident,
                Tok::OrOr,
                Tok::Bang,
                Tok::Ident,
                Tok::Lt,
                Tok::Ident,
                Tok::Gt,
                Tok::Ident,
                Tok::Assign,
                Tok::Float(f64::INFINITY),
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn newlines_inside_brackets_are_whitespace() {
        assert_eq!(
            kinds("f(a,\n b)\n{\nx}"),
            vec![
                Tok::Ident,
                Tok::LParen,
                Tok::Ident,
                Tok::Comma,
                Tok::Ident,
                Tok::RParen,
                Tok::Newline,
                Tok::LBrace,
                Tok::Newline,
                Tok::Ident,
                Tok::RBrace,
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn positions_and_errors() {
        let toks = lex("# comment\n  ab @ c");
        assert_eq!(toks[0].kind, Tok::Newline);
        assert_eq!((toks[1].span.line, toks[1].span.col), (2, 3));
        assert_eq!(toks[1].text, "ab");
        assert_eq!(
            toks[2].kind,
            Tok::Error("unexpected character `@`".to_string())
        );
        assert_eq!((toks[2].span.line, toks[2].span.col), (2, 6));
        assert_eq!(toks[3].kind, Tok::Eof);
        assert_eq!(toks.len(), 4);
    }
}
