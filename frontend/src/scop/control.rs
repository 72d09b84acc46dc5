//! Control flow: the statements, `if`s and `for` loops of a region, each loop's counter,
//! step, condition and bounds (the builder's loop context).

use super::*;

impl<'a> Builder<'a> {
    pub(super) fn stmt(&mut self, n: &Node) -> Result<()> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(n.span.start, code(text, n), why.to_string()));
        match &n.kind {
            Kind::Compound => {
                for c in &n.children {
                    self.stmt(c)?;
                }
                Ok(())
            }
            Kind::Null => Ok(()),
            Kind::For => self.for_loop(n),
            Kind::If => self.if_stmt(n),
            Kind::While | Kind::Do => refuse("only `for` loops with affine bounds are supported"),
            Kind::Switch => refuse("`switch` is not supported"),
            Kind::Return | Kind::Break | Kind::Continue | Kind::Goto | Kind::Label => {
                refuse("jumps out of the control flow are not supported")
            }
            Kind::DeclStmt => self.decl_stmt(n),
            Kind::TooDeep => refuse("nested too deeply"),
            kind if is_expression(kind) => self.expr_stmt(n),
            Kind::Other(kind) => refuse(&format!("unsupported statement ({kind})")),
            _ => refuse("unsupported statement"),
        }
    }

    fn if_stmt(&mut self, n: &Node) -> Result<()> {
        if n.children.len() < 2 || n.children.len() > 3 {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "unsupported form of `if`",
            ));
        }
        let cond = self.condition(&n.children[0])?;
        let not_cond = cond
            .not()
            .map_err(|e| affine_refusal(&n.children[0], self.text, e))?;
        self.conds.push(cond);
        let then = self.stmt(&n.children[1]);
        self.conds.pop();
        then?;
        if let Some(else_branch) = n.children.get(2) {
            self.conds.push(not_cond);
            let r = self.stmt(else_branch);
            self.conds.pop();
            r?;
        }
        Ok(())
    }

    fn for_loop(&mut self, n: &Node) -> Result<()> {
        let [init, cond, inc, body] = n.children.as_slice() else {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "a `for` loop needs an initialization, a condition and an increment",
            ));
        };
        let (decl, lb_node) = self.loop_init(init)?;
        let name = decl.name.clone();
        if !is_isl_identifier(&name) {
            return Err(Refusal::new(
                init.span.start,
                format!("loop counter `{name}`"),
                "its name is an ISL keyword",
            ));
        }
        if let Some(outer) = self.loops.iter().find(|l| l.name == name) {
            let why = if outer.key == decl.key {
                "it is already the counter of an enclosing loop"
            } else {
                "it shadows the counter of an enclosing loop"
            };
            return Err(Refusal::new(
                init.span.start,
                format!("loop counter `{name}`"),
                why,
            ));
        }
        let lb = self.affine(lb_node)?;
        let depth = self.loops.len();
        self.loops.push(LoopCtx {
            key: decl.key.clone(),
            name: name.clone(),
            formula: Formula::True,
            lower: None,
            upper: None,
        });
        self.counter_names.push((name, init.span.start));
        let r = self.for_loop_in_scope(n, depth, &lb, cond, inc, body);
        self.loops.pop();
        r
    }

    fn for_loop_in_scope(
        &mut self,
        n: &Node,
        depth: usize,
        lb: &Pw,
        cond: &Node,
        inc: &Node,
        body: &Node,
    ) -> Result<()> {
        let step = self.loop_step(inc, depth)?;
        let it = LinExpr::term(Term::Iter(depth));
        let text = self.text;
        let ar = |e: AffineError| affine_refusal(n, text, e);
        // Start: i >= lb (increasing) or i <= lb (decreasing), and i - lb a multiple of the step.
        let mut starts = Vec::new();
        for (g, v) in &lb.pieces {
            let dist = if step > 0 { it.sub(v) } else { v.sub(&it) }.map_err(ar)?;
            starts.push(Formula::and(vec![
                g.clone(),
                Formula::ge(dist.clone()),
                Formula::stride(dist, step),
            ]));
        }
        let start = Formula::or(starts);
        // Bounds known before the condition is read (used to prove dividends non-negative).
        let (lower, upper) = self.bounds_from(&start, depth);
        if let Some(l) = self.loops.last_mut() {
            l.lower = lower;
            l.upper = upper;
        }
        let cond_f = self.condition(cond)?;
        self.check_loop_condition(cond, &cond_f, depth, step > 0)?;
        let formula = Formula::and(vec![start, cond_f]);
        let (lower, upper) = self.bounds_from(&formula, depth);
        if let Some(l) = self.loops.last_mut() {
            l.formula = formula;
            l.lower = lower;
            l.upper = upper;
        }
        let pos = self.next_position();
        self.sched.push(SchedDim::Pos(pos));
        self.sched.push(SchedDim::Iter(depth, step > 0));
        self.positions.push(0);
        let r = self.stmt(body);
        self.positions.pop();
        self.sched.truncate(self.sched.len() - 2);
        r
    }

    /// The counter's declaration and its initial value from `i = lb` or `int i = lb`.
    fn loop_init<'n>(&self, init: &'n Node) -> Result<(&'n Decl, &'n Node)> {
        let text = self.text;
        let refuse = |why: &str| Refusal::new(init.span.start, code(text, init), why.to_string());
        let (decl, value) = match &init.kind {
            Kind::Binary(BinOp::Assign) if init.children.len() == 2 => {
                let lhs = strip(&init.children[0]);
                match (&lhs.kind, &lhs.decl) {
                    (Kind::DeclRef, Some(d)) => (d, &init.children[1]),
                    _ => return Err(refuse("the initialization must assign the loop counter")),
                }
            }
            Kind::DeclStmt => match init.children.as_slice() {
                [v] if v.kind == Kind::VarDecl => {
                    let d = v
                        .decl
                        .as_ref()
                        .ok_or_else(|| refuse("unknown declaration"))?;
                    let value = v
                        .children
                        .iter()
                        .rev()
                        .find(|c| c.kind != Kind::TypeRef)
                        .ok_or_else(|| refuse("the loop counter has no initial value"))?;
                    (d, value)
                }
                _ => {
                    return Err(refuse(
                        "the initialization must declare exactly one loop counter",
                    ))
                }
            },
            _ => return Err(refuse("the initialization must assign the loop counter")),
        };
        if !matches!(decl.kind, DeclKind::Var | DeclKind::Parm) || decl.file_scope {
            return Err(refuse("the loop counter must be a local variable"));
        }
        if decl.is_static {
            // Its final value would be seen by the next call.
            return Err(refuse("the loop counter must not be `static`"));
        }
        if !matches!(
            decl.ty,
            CType::Scalar {
                class: ScalarClass::SignedInt,
                ..
            }
        ) {
            return Err(refuse("the loop counter must have a signed integer type"));
        }
        Ok((decl, value))
    }

    /// The constant step of `i++`, `i--`, `i += c`, `i -= c`, `i = i + c`, ...
    fn loop_step(&mut self, inc: &Node, depth: usize) -> Result<i128> {
        let key = self.loops[depth].key.clone();
        let is_counter = |n: &Node| {
            let n = strip(n);
            n.kind == Kind::DeclRef && n.decl.as_ref().is_some_and(|d| d.key == key)
        };
        let text = self.text;
        let refuse = |why: &str| Refusal::new(inc.span.start, code(text, inc), why.to_string());
        let step = match &inc.kind {
            Kind::Unary(op @ (UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec))
                if inc.children.len() == 1 && is_counter(&inc.children[0]) =>
            {
                if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    1
                } else {
                    -1
                }
            }
            Kind::CompoundAssign(op @ (BinOp::AddAssign | BinOp::SubAssign))
                if inc.children.len() == 2 && is_counter(&inc.children[0]) =>
            {
                let c = self
                    .affine(&inc.children[1])?
                    .as_constant()
                    .ok_or_else(|| refuse("the loop step must be a constant"))?;
                if *op == BinOp::AddAssign {
                    c
                } else {
                    -c
                }
            }
            Kind::Binary(BinOp::Assign)
                if inc.children.len() == 2 && is_counter(&inc.children[0]) =>
            {
                let rhs = self.affine(&inc.children[1])?;
                let v = rhs
                    .as_affine()
                    .ok_or_else(|| refuse("the loop step must be a constant"))?;
                let mut rest = v.clone();
                let a = rest.terms.remove(&Term::Iter(depth)).unwrap_or(0);
                match (a, rest.as_constant()) {
                    (1, Some(c)) => c,
                    _ => {
                        return Err(refuse(
                            "the increment must add a constant to the loop counter",
                        ))
                    }
                }
            }
            _ => {
                return Err(refuse(
                    "the increment must add a constant to the loop counter",
                ))
            }
        };
        if step == 0 {
            return Err(refuse("the loop step is zero"));
        }
        Ok(step)
    }

    /// The loop condition must bound the counter on the side it moves to, so that the set of
    /// values satisfying it is exactly the set of iterations executed.
    fn check_loop_condition(
        &self,
        cond: &Node,
        f: &Formula,
        depth: usize,
        increasing: bool,
    ) -> Result<()> {
        let it = Term::Iter(depth);
        let name = &self.loops[depth].name;
        let mut bad: Option<&str> = None;
        f.for_each_atom(&mut |atom| {
            let (e, is_eq) = match atom {
                Formula::Ge(e) => (e, false),
                Formula::Eq(e) | Formula::Stride(e, _) => (e, true),
                _ => return,
            };
            let a = e.coefficient(&it);
            if e.mentions_nested(&it) {
                bad = Some("the loop counter appears inside a division or modulo in the condition");
            } else if a != 0 && (is_eq || (increasing && a > 0) || (!increasing && a < 0)) {
                bad = Some(
                    "the condition is not a bound on the loop counter in the direction it moves",
                );
            }
        });
        if let Some(why) = bad {
            return Err(Refusal::new(cond.span.start, self.code(cond), why));
        }
        if !bounds_counter(f, &it) {
            return Err(Refusal::new(
                cond.span.start,
                self.code(cond),
                format!("the condition does not bound the loop counter `{name}`"),
            ));
        }
        Ok(())
    }

    /// Constant bounds on the counter at `depth` implied by the top-level conjuncts of `f`.
    fn bounds_from(&self, f: &Formula, depth: usize) -> (Option<i128>, Option<i128>) {
        let it = Term::Iter(depth);
        let atoms: Vec<&Formula> = match f {
            Formula::And(parts) => parts.iter().collect(),
            other => vec![other],
        };
        let (mut lower, mut upper): (Option<i128>, Option<i128>) = (None, None);
        for atom in atoms {
            let Formula::Ge(e) = atom else { continue };
            let a = e.coefficient(&it);
            if e.mentions_nested(&it) || a.abs() != 1 {
                continue;
            }
            let mut rest = e.clone();
            rest.terms.remove(&it);
            if a == 1 {
                // i >= -rest
                if let Some(v) = self.max_value(&rest).and_then(|m| m.checked_neg()) {
                    lower = Some(lower.map_or(v, |l| l.max(v)));
                }
            } else if let Some(v) = self.max_value(&rest) {
                // i <= rest
                upper = Some(upper.map_or(v, |u| u.min(v)));
            }
        }
        (lower, upper)
    }

    fn term_range(&self, t: &Term) -> (Option<i128>, Option<i128>) {
        match t {
            Term::Iter(d) => self
                .loops
                .get(*d)
                .map_or((None, None), |l| (l.lower, l.upper)),
            Term::Param(_) | Term::Out(_) => (None, None),
            Term::Floor(e, c) => (
                self.min_value(e).map(|v| v.div_euclid(*c)),
                self.max_value(e).map(|v| v.div_euclid(*c)),
            ),
            Term::Mod(_, c) => (Some(0), Some(c - 1)),
        }
    }

    pub(super) fn min_value(&self, e: &LinExpr) -> Option<i128> {
        let mut total = e.constant;
        for (t, &a) in &e.terms {
            let (lo, hi) = self.term_range(t);
            let v = if a > 0 { lo? } else { hi? };
            total = total.checked_add(a.checked_mul(v)?)?;
        }
        Some(total)
    }

    fn max_value(&self, e: &LinExpr) -> Option<i128> {
        let mut total = e.constant;
        for (t, &a) in &e.terms {
            let (lo, hi) = self.term_range(t);
            let v = if a > 0 { hi? } else { lo? };
            total = total.checked_add(a.checked_mul(v)?)?;
        }
        Some(total)
    }
}
