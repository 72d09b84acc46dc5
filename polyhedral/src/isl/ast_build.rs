//! AST generation: `isl_ast_build` turns a schedule map into an `isl_ast_node` tree, which callers
//! read through the plain views [`AstNodeView`] and [`AstExprView`].

use super::map::UnionMap;
use super::set::Set;
use super::{
    borrowed_c_string, c_string, check_bool, check_size, ffi, isl_object, take_c_string, to_c_int,
};
use crate::{Error, Result};
use std::ptr;

isl_object!(
    /// An `isl_ast_build`: the context and options of AST generation.
    AstBuild, isl_ast_build, isl_ast_build_copy, isl_ast_build_free
);

isl_object!(
    /// An `isl_ast_node`: generated control code.
    AstNode, isl_ast_node, isl_ast_node_copy, isl_ast_node_free
);

isl_object!(
    /// An `isl_ast_expr`: an integer expression of generated code.
    AstExpr, isl_ast_expr, isl_ast_expr_copy, isl_ast_expr_free
);

/// One level of an [`AstNode`].
pub enum AstNodeView<'c> {
    For {
        iterator: AstExpr<'c>,
        init: AstExpr<'c>,
        cond: AstExpr<'c>,
        inc: AstExpr<'c>,
        body: AstNode<'c>,
    },
    If {
        cond: AstExpr<'c>,
        then: AstNode<'c>,
        els: Option<AstNode<'c>>,
    },
    Block(Vec<AstNode<'c>>),
    /// A mark around `node` (carries no code).
    Mark(AstNode<'c>),
    /// A statement instance: a call expression.
    User(AstExpr<'c>),
}

/// One level of an [`AstExpr`].
pub enum AstExprView<'c> {
    Op(AstOp, Vec<AstExpr<'c>>),
    Id(String),
    /// A decimal integer.
    Int(String),
}

/// `enum isl_ast_expr_op_type`, in ISL's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AstOp {
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
    Div,
    FdivQ,
    PdivQ,
    PdivR,
    ZdivR,
    Cond,
    Select,
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
    Call,
    Access,
    Member,
    AddressOf,
}

const AST_OPS: [AstOp; 26] = [
    AstOp::And,
    AstOp::AndThen,
    AstOp::Or,
    AstOp::OrElse,
    AstOp::Max,
    AstOp::Min,
    AstOp::Minus,
    AstOp::Add,
    AstOp::Sub,
    AstOp::Mul,
    AstOp::Div,
    AstOp::FdivQ,
    AstOp::PdivQ,
    AstOp::PdivR,
    AstOp::ZdivR,
    AstOp::Cond,
    AstOp::Select,
    AstOp::Eq,
    AstOp::Le,
    AstOp::Lt,
    AstOp::Ge,
    AstOp::Gt,
    AstOp::Call,
    AstOp::Access,
    AstOp::Member,
    AstOp::AddressOf,
];

impl<'c> AstBuild<'c> {
    /// A build for schedules whose parameters satisfy the parameter set `context`.
    pub fn from_context(context: Set<'c>) -> Result<Self> {
        let ctx = context.ctx();
        // SAFETY: `context` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_ast_build_from_context(context.into_raw()) };
        AstBuild::from_raw(ctx, raw)
    }

    /// Names the loop iterators of schedule dimensions 0, 1, ... (ISL invents names past the list).
    pub fn set_iterators(self, names: &[String]) -> Result<Self> {
        let ctx = self.ctx();
        let names = names
            .iter()
            .map(|n| c_string(n))
            .collect::<Result<Vec<_>>>()?;
        // SAFETY: `ctx` is live; each id is owned and given to the list (take, take), ISL copies the
        // name; a NULL list propagates through isl_id_list_add (which frees the id).
        let mut list = unsafe { ffi::isl_id_list_alloc(ctx.as_raw(), to_c_int(names.len())?) };
        for name in &names {
            // SAFETY: as above; `name` outlives the call.
            list = unsafe {
                ffi::isl_id_list_add(
                    list,
                    ffi::isl_id_alloc(ctx.as_raw(), name.as_ptr(), ptr::null_mut()),
                )
            };
        }
        if list.is_null() {
            return Err(ctx.take_error());
        }
        // SAFETY: `self` and `list` are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_ast_build_set_iterators(self.into_raw(), list) };
        AstBuild::from_raw(ctx, raw)
    }

    /// Sets the AST generation options (`{ [schedule dims] -> separate[x] }` and the like).
    pub fn set_options(self, options: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: `self` and `options` are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_ast_build_set_options(self.into_raw(), options.into_raw()) };
        AstBuild::from_raw(ctx, raw)
    }

    /// An expression that is true exactly for the points of `set`, a set in the build's schedule
    /// space (zero-dimensional for a fresh build: a condition on the parameters).
    pub fn expr_from_set(&self, set: Set<'c>) -> Result<AstExpr<'c>> {
        // SAFETY: `self` is kept, `set` given (take); the result is owned.
        let raw = unsafe { ffi::isl_ast_build_expr_from_set(self.as_raw(), set.into_raw()) };
        AstExpr::from_raw(self.ctx(), raw)
    }

    /// The smallest (or, with `max`, the largest) value of dimension `pos` of `set`, a set whose
    /// parameters are those of the build's context, as an expression of those parameters; where
    /// the set is empty for the parameters' values, the expression means nothing.
    pub fn expr_from_dim_bound(&self, set: Set<'c>, pos: usize, max: bool) -> Result<AstExpr<'c>> {
        let pos = std::ffi::c_int::try_from(pos)
            .map_err(|_| crate::Error::Isl(format!("dimension {pos} is too large")))?;
        // SAFETY: `set` is given to ISL (take); the piecewise expression it gives is handed on
        // to the build (take), which is kept; the result is owned.
        let raw = unsafe {
            let bound = match max {
                true => ffi::isl_set_dim_max(set.into_raw(), pos),
                false => ffi::isl_set_dim_min(set.into_raw(), pos),
            };
            ffi::isl_ast_build_expr_from_pw_aff(self.as_raw(), bound)
        };
        AstExpr::from_raw(self.ctx(), raw)
    }

    /// Code that executes the domain of `schedule` in the lexicographic order of its range.
    pub fn node_from_schedule_map(&self, schedule: UnionMap<'c>) -> Result<AstNode<'c>> {
        // SAFETY: `self` is kept, `schedule` given (take); the result is owned.
        let raw = unsafe {
            ffi::isl_ast_build_node_from_schedule_map(self.as_raw(), schedule.into_raw())
        };
        AstNode::from_raw(self.ctx(), raw)
    }
}

impl<'c> AstNode<'c> {
    /// The node's kind and direct parts.
    pub fn view(&self) -> Result<AstNodeView<'c>> {
        let ctx = self.ctx();
        let node = self.as_raw();
        // "See above" below: `node` is live (keep), its kind was read first, ISL checks the kind
        // again in each accessor, and each part returned is owned by us (give).
        // SAFETY: `node` is live (keep).
        let kind = unsafe { ffi::isl_ast_node_get_type(node) };
        Ok(match kind {
            ffi::ISL_AST_NODE_FOR => AstNodeView::For {
                // SAFETY: see above.
                iterator: AstExpr::from_raw(ctx, unsafe {
                    ffi::isl_ast_node_for_get_iterator(node)
                })?,
                // SAFETY: see above.
                init: AstExpr::from_raw(ctx, unsafe { ffi::isl_ast_node_for_get_init(node) })?,
                // SAFETY: see above.
                cond: AstExpr::from_raw(ctx, unsafe { ffi::isl_ast_node_for_get_cond(node) })?,
                // SAFETY: see above.
                inc: AstExpr::from_raw(ctx, unsafe { ffi::isl_ast_node_for_get_inc(node) })?,
                // SAFETY: see above.
                body: AstNode::from_raw(ctx, unsafe { ffi::isl_ast_node_for_get_body(node) })?,
            },
            ffi::ISL_AST_NODE_IF => {
                // SAFETY: see above.
                let cond = AstExpr::from_raw(ctx, unsafe { ffi::isl_ast_node_if_get_cond(node) })?;
                // SAFETY: see above.
                let then =
                    AstNode::from_raw(ctx, unsafe { ffi::isl_ast_node_if_get_then_node(node) })?;
                // SAFETY: see above.
                let has_else =
                    check_bool(ctx, unsafe { ffi::isl_ast_node_if_has_else_node(node) })?;
                let els = if has_else {
                    // SAFETY: see above.
                    Some(AstNode::from_raw(ctx, unsafe {
                        ffi::isl_ast_node_if_get_else_node(node)
                    })?)
                } else {
                    None
                };
                AstNodeView::If { cond, then, els }
            }
            ffi::ISL_AST_NODE_BLOCK => {
                // SAFETY: see above; the list is owned and freed below.
                let list = unsafe { ffi::isl_ast_node_block_get_children(node) };
                if list.is_null() {
                    return Err(ctx.take_error());
                }
                let children = (|| {
                    // SAFETY: `list` is live (keep).
                    let n = check_size(ctx, unsafe { ffi::isl_ast_node_list_size(list) })?;
                    (0..n)
                        .map(|k| {
                            let k = to_c_int(k)?;
                            // SAFETY: `list` is live and `k` < its size; the element is owned.
                            AstNode::from_raw(ctx, unsafe {
                                ffi::isl_ast_node_list_get_at(list, k)
                            })
                        })
                        .collect::<Result<Vec<_>>>()
                })();
                // SAFETY: the list is owned and freed once; its elements were copied out.
                unsafe { ffi::isl_ast_node_list_free(list) };
                AstNodeView::Block(children?)
            }
            // SAFETY: see above.
            ffi::ISL_AST_NODE_MARK => AstNodeView::Mark(AstNode::from_raw(ctx, unsafe {
                ffi::isl_ast_node_mark_get_node(node)
            })?),
            // SAFETY: see above.
            ffi::ISL_AST_NODE_USER => AstNodeView::User(AstExpr::from_raw(ctx, unsafe {
                ffi::isl_ast_node_user_get_expr(node)
            })?),
            k if k < 0 => return Err(ctx.take_error()),
            k => return Err(Error::Isl(format!("unknown ISL AST node type {k}"))),
        })
    }
}

impl<'c> AstExpr<'c> {
    /// The expression's kind and direct parts.
    pub fn view(&self) -> Result<AstExprView<'c>> {
        let ctx = self.ctx();
        let expr = self.as_raw();
        // SAFETY: `expr` is live (keep).
        let kind = unsafe { ffi::isl_ast_expr_get_type(expr) };
        Ok(match kind {
            ffi::ISL_AST_EXPR_OP => {
                // SAFETY: `expr` is a live operation expression (keep).
                let op = unsafe { ffi::isl_ast_expr_op_get_type(expr) };
                let op = usize::try_from(op)
                    .ok()
                    .and_then(|k| AST_OPS.get(k).copied())
                    .ok_or_else(|| Error::Isl(format!("unknown ISL AST operation {op}")))?;
                debug_assert_eq!(AST_OPS[ffi::ISL_AST_EXPR_OP_CALL as usize], AstOp::Call);
                // SAFETY: `expr` is a live operation expression (keep).
                let n = check_size(ctx, unsafe { ffi::isl_ast_expr_op_get_n_arg(expr) })?;
                let args = (0..n)
                    .map(|k| {
                        let k = to_c_int(k)?;
                        // SAFETY: `expr` is live and `k` < its number of arguments; the argument is owned.
                        AstExpr::from_raw(ctx, unsafe { ffi::isl_ast_expr_op_get_arg(expr, k) })
                    })
                    .collect::<Result<Vec<_>>>()?;
                AstExprView::Op(op, args)
            }
            ffi::ISL_AST_EXPR_ID => {
                // SAFETY: `expr` is a live identifier expression (keep); the id is owned and freed
                // below, after its name (which it owns) has been copied.
                let id = unsafe { ffi::isl_ast_expr_id_get_id(expr) };
                if id.is_null() {
                    return Err(ctx.take_error());
                }
                // SAFETY: `id` is live (keep).
                let name = borrowed_c_string(unsafe { ffi::isl_id_get_name(id) });
                // SAFETY: `id` is owned and freed once.
                unsafe { ffi::isl_id_free(id) };
                AstExprView::Id(
                    name.ok_or_else(|| Error::Isl("ISL AST identifier without a name".into()))?,
                )
            }
            ffi::ISL_AST_EXPR_INT => {
                // SAFETY: `expr` is a live integer expression (keep); the value is owned and freed below.
                let val = unsafe { ffi::isl_ast_expr_int_get_val(expr) };
                if val.is_null() {
                    return Err(ctx.take_error());
                }
                // SAFETY: `val` is live (keep); the string is owned.
                let text = take_c_string(ctx, unsafe { ffi::isl_val_to_str(val) });
                // SAFETY: `val` is owned and freed once.
                unsafe { ffi::isl_val_free(val) };
                AstExprView::Int(text?)
            }
            k if k < 0 => return Err(ctx.take_error()),
            k => return Err(Error::Isl(format!("unknown ISL AST expression type {k}"))),
        })
    }
}
