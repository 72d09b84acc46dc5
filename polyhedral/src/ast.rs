//! A plain-data C AST, converted from ISL's `isl_ast_node`/`isl_ast_expr` so that code generation
//! (in `taskgen`) never touches ISL. Iterators and parameters are plain names; integers are
//! decimal strings because ISL values may exceed `i64`.

/// A statement of generated control code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ast {
    /// Statements in order.
    Block(Vec<Ast>),
    /// `for (iter = init; cond; iter += inc) body`; `cond` mentions `iter`.
    For {
        iter: String,
        init: Expr,
        cond: Expr,
        inc: Expr,
        body: Box<Ast>,
    },
    /// `if (cond) then else els`.
    If {
        cond: Expr,
        then: Box<Ast>,
        els: Option<Box<Ast>>,
    },
    /// An instance of a domain element: `name` is the tuple name (a statement `S3`, a tile space
    /// `N0`, ...) and `args` its coordinates expressed in the enclosing iterators and parameters.
    User { name: String, args: Vec<Expr> },
}

impl Ast {
    /// Calls `f` on every node of the tree, parents before their children, in order.
    pub fn walk(&self, f: &mut dyn FnMut(&Ast)) {
        f(self);
        match self {
            Ast::Block(items) => items.iter().for_each(|i| i.walk(f)),
            Ast::For { body, .. } => body.walk(f),
            Ast::If { then, els, .. } => {
                then.walk(f);
                if let Some(e) = els {
                    e.walk(f);
                }
            }
            Ast::User { .. } => {}
        }
    }
}

/// An integer expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A decimal integer literal, possibly negative.
    Int(String),
    /// An iterator or parameter name.
    Id(String),
    /// An operation; the arity follows ISL (`Minus` unary, `Cond`/`Select` ternary, `Min`/`Max`
    /// n-ary, the rest binary).
    Op(OpKind, Vec<Expr>),
}

/// Operations of [`Expr::Op`], with ISL's semantics (see `isl_ast_expr_op_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    And,
    AndThen,
    Or,
    OrElse,
    Max,
    Min,
    Minus,
    Add,
    Sub,
    Mul,
    /// Exact division (the remainder is known to be zero).
    Div,
    /// Floor division (rounds towards negative infinity).
    FdivQ,
    /// Division whose dividend is known to be non-negative (C `/` is correct).
    PdivQ,
    /// Remainder whose dividend is known to be non-negative (C `%` is correct).
    PdivR,
    /// Remainder only compared against zero (C `%` is correct for that).
    ZdivR,
    /// `a ? b : c` where only the chosen branch is evaluated.
    Cond,
    /// `a ? b : c` where both branches may be evaluated.
    Select,
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
}
