//! Affine expressions and conditions: loop bounds, subscripts and guards as piecewise affine
//! forms of the counters and parameters ([`crate::affine`]).

use super::*;

impl<'a> Builder<'a> {
    /// An affine condition (`&&`, `||`, `!`, comparisons, ternaries, integer values).
    pub(super) fn condition(&mut self, n: &Node) -> Result<Formula> {
        let n = strip(n);
        let text = self.text;
        let ar = |e| affine_refusal(n, text, e);
        match &n.kind {
            Kind::Binary(op @ (BinOp::LAnd | BinOp::LOr)) if n.children.len() == 2 => {
                let a = self.condition(&n.children[0])?;
                let b = self.condition(&n.children[1])?;
                Ok(if *op == BinOp::LAnd {
                    Formula::and(vec![a, b])
                } else {
                    Formula::or(vec![a, b])
                })
            }
            Kind::Unary(UnOp::LNot) if n.children.len() == 1 => {
                self.condition(&n.children[0])?.not().map_err(ar)
            }
            Kind::Binary(
                op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne),
            ) if n.children.len() == 2 => {
                let cmp = match op {
                    BinOp::Lt => Cmp::Lt,
                    BinOp::Le => Cmp::Le,
                    BinOp::Gt => Cmp::Gt,
                    BinOp::Ge => Cmp::Ge,
                    BinOp::Eq => Cmp::Eq,
                    _ => Cmp::Ne,
                };
                // Blame the operand that is not an integer, not the implicit conversion of the
                // other one to its type.
                for c in &n.children {
                    let core = strip(c);
                    if !matches!(
                        core.ty,
                        CType::Scalar {
                            class: ScalarClass::SignedInt,
                            ..
                        }
                    ) {
                        self.affine(core)?;
                    }
                }
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                a.compare(cmp, &b).map_err(ar)
            }
            Kind::Conditional if n.children.len() == 3 => {
                let c = self.condition(&n.children[0])?;
                let a = self.condition(&n.children[1])?;
                let b = self.condition(&n.children[2])?;
                let not_c = c.not().map_err(ar)?;
                Ok(Formula::or(vec![
                    Formula::and(vec![c, a]),
                    Formula::and(vec![not_c, b]),
                ]))
            }
            _ => {
                let v = self.affine(n)?;
                v.compare(Cmp::Ne, &Pw::single(LinExpr::constant(0)))
                    .map_err(ar)
            }
        }
    }

    /// A quasi-affine integer expression with C's semantics.
    pub(super) fn affine(&mut self, n: &Node) -> Result<Pw> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(n.span.start, code(text, n), why.to_string()));
        let ar = |e| affine_refusal(n, text, e);
        match strip(n).kind {
            Kind::Subscript => {
                return refuse("array elements are data-dependent values, not affine expressions")
            }
            Kind::Call => return refuse("function calls are not affine expressions"),
            _ => {}
        }
        match &n.ty {
            CType::Scalar {
                class: ScalarClass::SignedInt,
                ..
            } => {}
            CType::Scalar {
                class: ScalarClass::UnsignedInt,
                ..
            } => {
                return refuse(
                    "unsigned arithmetic wraps around, so it is not affine over the integers",
                )
            }
            CType::Scalar {
                class: ScalarClass::Float,
                ..
            } => {
                return refuse(
                    "floating-point value where an affine integer expression is required",
                )
            }
            _ => return refuse("not an integer expression"),
        }
        match &n.kind {
            Kind::IntLit | Kind::SizeOf => match n.int_value {
                Some(v) => Ok(Pw::single(LinExpr::constant(i128::from(v)))),
                None => refuse("not an integer constant that fits 64 bits"),
            },
            Kind::Paren | Kind::Unexposed if n.children.len() == 1 => self.affine(&n.children[0]),
            Kind::Cast if n.int_value.is_some() => Ok(Pw::single(LinExpr::constant(i128::from(
                n.int_value.unwrap_or(0),
            )))),
            Kind::Cast => {
                let Some(operand) = n.children.last().filter(|c| c.kind != Kind::TypeRef) else {
                    return refuse("unsupported cast");
                };
                match &n.ty {
                    CType::Scalar { unqualified, .. }
                        if matches!(
                            unqualified.as_str(),
                            "int" | "long" | "long long" | "__int128"
                        ) => {}
                    _ => return refuse("casts to types narrower than `int` may change the value"),
                }
                self.affine(operand)
            }
            Kind::DeclRef => self.symbol(n),
            Kind::Unary(UnOp::Minus) if n.children.len() == 1 => {
                self.affine(&n.children[0])?.map(|v| v.neg()).map_err(ar)
            }
            Kind::Unary(UnOp::Plus) if n.children.len() == 1 => self.affine(&n.children[0]),
            Kind::Binary(op @ (BinOp::Add | BinOp::Sub)) if n.children.len() == 2 => {
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                if *op == BinOp::Add {
                    a.zip(&b, |x, y| x.add(y))
                } else {
                    a.zip(&b, |x, y| x.sub(y))
                }
                .map_err(ar)
            }
            Kind::Binary(BinOp::Mul) if n.children.len() == 2 => {
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                if let Some(k) = b.as_constant() {
                    a.map(|v| v.scale(k)).map_err(ar)
                } else if let Some(k) = a.as_constant() {
                    b.map(|v| v.scale(k)).map_err(ar)
                } else {
                    refuse("product of two non-constant expressions is not affine")
                }
            }
            Kind::Binary(op @ (BinOp::Div | BinOp::Rem)) if n.children.len() == 2 => {
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                let Some(c) = b.as_constant() else {
                    return refuse("division by a non-constant expression is not affine");
                };
                if c == 0 {
                    return refuse("division by zero");
                }
                let nonneg = |e: &LinExpr| self.min_value(e).is_some_and(|v| v >= 0);
                if *op == BinOp::Div {
                    a.c_div(c, &nonneg)
                } else {
                    a.c_rem(c, &nonneg)
                }
                .map_err(ar)
            }
            Kind::Conditional if n.children.len() == 3 => {
                let c = self.condition(&n.children[0])?;
                let a = self.affine(&n.children[1])?;
                let b = self.affine(&n.children[2])?;
                Pw::select(&c, &a, &b).map_err(ar)
            }
            Kind::TooDeep => refuse("nested too deeply"),
            _ => refuse("not an affine expression"),
        }
    }

    /// A variable inside an affine expression: an enclosing iterator, an enumeration constant
    /// or a parameter.
    fn symbol(&mut self, n: &Node) -> Result<Pw> {
        let Some(d) = &n.decl else {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "unknown declaration",
            ));
        };
        let refuse = |why: String| Err(Refusal::new(n.span.start, format!("`{}`", d.name), why));
        match d.kind {
            DeclKind::EnumConstant => {
                return Ok(Pw::single(LinExpr::constant(i128::from(
                    d.enum_value.unwrap_or(0),
                ))));
            }
            DeclKind::Var | DeclKind::Parm => {}
            _ => return refuse("not a variable".to_string()),
        }
        if let Some(depth) = self.loops.iter().position(|l| l.key == d.key) {
            return Ok(Pw::single(LinExpr::term(Term::Iter(depth))));
        }
        if self.counters.contains(&d.key) {
            return refuse("loop counter used outside its loop".to_string());
        }
        if self.written.contains(&d.key) {
            return refuse("assigned inside the region, so it cannot be a parameter".to_string());
        }
        if !matches!(
            d.ty,
            CType::Scalar {
                class: ScalarClass::SignedInt,
                ..
            }
        ) {
            return refuse("parameters must be signed integer variables".to_string());
        }
        if let Some(k) = self.params.iter().position(|p| p.key == d.key) {
            return Ok(Pw::single(LinExpr::term(Term::Param(k))));
        }
        if !is_isl_identifier(&d.name) {
            return refuse("its name is an ISL keyword, so it cannot be a parameter".to_string());
        }
        if self.params.iter().any(|p| p.name == d.name) {
            return refuse("two different variables with this name are parameters".to_string());
        }
        let c_type = match &d.ty {
            CType::Scalar { unqualified, .. } => unqualified.clone(),
            _ => String::new(),
        };
        self.params.push(ParamInfo {
            key: d.key.clone(),
            name: d.name.clone(),
            c_type,
            storage: if d.file_scope {
                Storage::File
            } else {
                Storage::Local
            },
        });
        Ok(Pw::single(LinExpr::term(Term::Param(
            self.params.len() - 1,
        ))))
    }
}
