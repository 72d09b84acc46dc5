//! Statement bodies: expression statements and their effects, chained assignments split into
//! statements of their own, declarations with initializers, and where a statement's text ends
//! (macro calls included).

use super::*;

impl<'a> Builder<'a> {
    pub(super) fn expr_stmt(&mut self, n: &Node) -> Result<()> {
        if !n.in_main_file {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "the statement is not written in this file",
            ));
        }
        // A statement that is a function-like macro's whole expansion (`UPD(C, i);`) starts,
        // as written, at the macro's name: libclang's extent starts at the first argument the
        // expansion spells.
        let call = self.macro_call_start(n.span.start);
        let start = call.as_ref().map_or(n.span.start, |(start, _)| *start);
        let end = self.statement_end(start, n.span.end).ok_or_else(|| {
            let why = match &call {
                Some((_, name)) => format!(
                    "the call of macro `{name}` is not followed by its own `;` (the `;` comes from the macro's definition): write `{name}(...);`"
                ),
                None => "the statement's text is not delimited by its own `;` (macro?)".to_string(),
            };
            Refusal::new(n.span.start, self.code(n), why)
        })?;
        let span = Span { start, end };
        let top = strip_parens(n);
        if splits(top) {
            if let Some((at, name)) = &call {
                return Err(Refusal::new(
                    *at,
                    format!("`{name}(...)`"),
                    format!("the comma expression or chained assignment that macro `{name}` expands to cannot be split into its statements from the written text"),
                ));
            }
            return self.split_expression(top);
        }
        let accesses = self.effect(n, top)?;
        let mut refs = Vec::new();
        collect_refs(n, &mut refs);
        self.push_stmt(accesses, refs, span, vec![Segment::Source(span)]);
        Ok(())
    }

    /// The accesses of an assignment, compound assignment or increment `top` (the statement
    /// `n`, parentheses stripped).
    fn effect(&mut self, n: &Node, top: &Node) -> Result<Vec<RawAccess>> {
        let mut accesses = Vec::new();
        match &top.kind {
            Kind::Binary(BinOp::Assign) if top.children.len() == 2 => {
                self.access(&top.children[0], &[AccessKind::Write], &mut accesses)?;
                self.reads(&top.children[1], &mut accesses)?;
            }
            Kind::CompoundAssign(_) if top.children.len() == 2 => {
                self.access(
                    &top.children[0],
                    &[AccessKind::Read, AccessKind::Write],
                    &mut accesses,
                )?;
                self.reads(&top.children[1], &mut accesses)?;
            }
            Kind::Unary(UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec)
                if top.children.len() == 1 =>
            {
                self.access(
                    &top.children[0],
                    &[AccessKind::Read, AccessKind::Write],
                    &mut accesses,
                )?;
            }
            _ => return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "only assignments, compound assignments and increments are supported as statements",
            )),
        }
        Ok(accesses)
    }

    /// A comma expression or a chained assignment, as the statements it sequences: `a, b;` is
    /// `a; b;`, and `x = y = e;` is `y = e; x = y;` (C gives the inner assignment's value as
    /// `y` holds it afterwards; `x` and `y` being one element is undefined behaviour, so reading
    /// `y` back is exact). Each part's text is cut from the source, so each must be whole tokens
    /// of this file, the operator between them included.
    pub(super) fn split_expression(&mut self, e: &Node) -> Result<()> {
        let e = strip_parens(e);
        let refuse = |why: &str| {
            Err(Refusal::new(
                e.span.start,
                code(self.text, e),
                why.to_string(),
            ))
        };
        if !self.whole_tokens(e.span) {
            return refuse("the statement's parts are not written in this file's text (macro?)");
        }
        if let (Kind::Binary(BinOp::Comma), [a, b]) = (&e.kind, e.children.as_slice()) {
            self.split_expression(a)?;
            return self.split_expression(b);
        }
        let inner = match (&e.kind, e.children.as_slice()) {
            (Kind::Binary(BinOp::Assign) | Kind::CompoundAssign(_), [_, rhs]) => {
                Some(strip(rhs)).filter(|r| assigns(r))
            }
            _ => None,
        };
        let Some(inner) = inner else {
            let accesses = self.effect(e, e)?;
            let mut refs = Vec::new();
            collect_refs(e, &mut refs);
            self.push_stmt(
                accesses,
                refs,
                e.span,
                vec![Segment::Source(e.span), Segment::Text(";")],
            );
            return Ok(());
        };
        let (lhs, rhs) = (&e.children[0], &e.children[1]);
        let Some(inner_lhs) = inner
            .children
            .first()
            .filter(|_| inner.kind != Kind::Binary(BinOp::Comma))
        else {
            return refuse("a comma expression assigned is not supported");
        };
        self.split_expression(inner)?;
        // `lhs op inner_lhs;`, with the operator as written.
        let op = self
            .tokens
            .get(self.tokens.partition_point(|t| t.span.start < lhs.span.end));
        let op = match op.map(|t| t.spelling.as_str()) {
            Some("=") => " = ",
            Some("+=") => " += ",
            Some("-=") => " -= ",
            Some("*=") => " *= ",
            Some("/=") => " /= ",
            Some("%=") => " %= ",
            Some("<<=") => " <<= ",
            Some(">>=") => " >>= ",
            Some("&=") => " &= ",
            Some("^=") => " ^= ",
            Some("|=") => " |= ",
            _ => {
                return refuse(
                    "the assignment's operator is not written in this file's text (macro?)",
                )
            }
        };
        if !self.whole_tokens(lhs.span)
            || !self.whole_tokens(inner_lhs.span)
            || !self.whole_tokens(rhs.span)
        {
            return refuse("the statement's parts are not written in this file's text (macro?)");
        }
        let mut accesses = Vec::new();
        let kinds: &[AccessKind] = match e.kind {
            Kind::Binary(BinOp::Assign) => &[AccessKind::Write],
            _ => &[AccessKind::Read, AccessKind::Write],
        };
        self.access(lhs, kinds, &mut accesses)?;
        self.reads(inner_lhs, &mut accesses)?;
        let mut refs = Vec::new();
        collect_refs(lhs, &mut refs);
        collect_refs(inner_lhs, &mut refs);
        self.push_stmt(
            accesses,
            refs,
            e.span,
            vec![
                Segment::Source(lhs.span),
                Segment::Text(op),
                Segment::Source(inner_lhs.span),
                Segment::Text(";"),
            ],
        );
        Ok(())
    }

    /// `span` is whole tokens of this file: a token starts where it starts and one ends where
    /// it ends.
    fn whole_tokens(&self, span: Span) -> bool {
        let first = self.tokens.partition_point(|t| t.span.start < span.start);
        let starts = self
            .tokens
            .get(first)
            .is_some_and(|t| t.span.start == span.start);
        let ends = self.tokens[first..]
            .iter()
            .take_while(|t| t.span.start < span.end)
            .last()
            .is_some_and(|t| t.span.end == span.end);
        span.start < span.end && starts && ends
    }

    /// A statement of `accesses` at the current position: `span` for its location, `refs` the
    /// references in its `text`.
    fn push_stmt(
        &mut self,
        accesses: Vec<RawAccess>,
        refs: Vec<RawRef>,
        span: Span,
        text: Vec<Segment>,
    ) {
        let mut schedule = self.sched.clone();
        schedule.push(SchedDim::Pos(self.next_position()));
        let mut parts: Vec<Formula> = self.loops.iter().map(|l| l.formula.clone()).collect();
        parts.extend(self.conds.iter().cloned());
        self.stmts.push(RawStmt {
            iter_keys: self.loops.iter().map(|l| l.key.clone()).collect(),
            iter_names: self.loops.iter().map(|l| l.name.clone()).collect(),
            domain: Formula::and(parts),
            schedule,
            accesses,
            refs,
            span,
            text,
        });
    }

    /// `T x = e, y;` inside a loop or branch of the region. Each declared scalar is a variable of
    /// the SCoP that the generated code declares once, at the head of its block
    /// (`Storage::Block`), and each initializer a statement `x = e;`. One variable for all
    /// iterations computes what a fresh one per iteration does: an iteration reads it only after
    /// writing it (reading an uninitialized variable is undefined), and the dependences between
    /// iterations that sharing it adds are the ones scalar privatization removes.
    pub(super) fn decl_stmt(&mut self, n: &Node) -> Result<()> {
        let text = self.text;
        let refuse = |at: &Node, why: &str| {
            Err(Refusal::new(at.span.start, code(text, at), why.to_string()))
        };
        if self.loops.is_empty() && self.conds.is_empty() {
            return refuse(
                n,
                "declarations outside the region's loops and branches are not supported (the variable is visible after the region)",
            );
        }
        for v in &n.children {
            let Some(d) = v.decl.as_ref().filter(|_| v.kind == Kind::VarDecl) else {
                return refuse(v, "unsupported declaration");
            };
            if d.is_static {
                return refuse(
                    v,
                    "`static` variables declared inside the region are not supported",
                );
            }
            let CType::Scalar { spelling, .. } = &d.ty else {
                return refuse(v, "only scalar variables may be declared inside the region");
            };
            if spelling.split_whitespace().any(|w| w == "volatile") {
                return refuse(
                    v,
                    "`volatile` variables declared inside the region are not supported",
                );
            }
            self.block_decls.push((d.key.clone(), v.offset));
            let init = v.children.iter().rev().find(|c| c.kind != Kind::TypeRef);
            match init {
                Some(init) if is_expression(&init.kind) => self.initializer(v, d, init)?,
                Some(other) => return refuse(other, "unsupported declaration"),
                None => {}
            }
        }
        Ok(())
    }

    /// The statement `x = e;` of the declaration `v` of `x` with the initializer `init`.
    fn initializer(&mut self, v: &Node, d: &Decl, init: &Node) -> Result<()> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(v.span.start, code(text, v), why.to_string()));
        // The initializer's text is re-emitted: it must be exactly the tokens between `=` and
        // the `,` or `;` that end the declarator.
        let first = self
            .tokens
            .partition_point(|t| t.span.start < init.span.start);
        let after = self
            .tokens
            .partition_point(|t| t.span.start < init.span.end);
        let delimited = v.in_main_file
            && init.in_main_file
            && first > 0
            && self.tokens[first - 1].spelling == "="
            && self
                .tokens
                .get(first)
                .is_some_and(|t| t.span.start == init.span.start)
            && self
                .tokens
                .get(after)
                .is_some_and(|t| matches!(t.spelling.as_str(), "," | ";"));
        if !delimited {
            return refuse("the initializer's text is not delimited by `=` and `;` (macro?)");
        }
        let shape = array_shape(&d.ty)
            .map_err(|why| Refusal::new(v.span.start, format!("`{}`", d.name), why))?;
        let array = self.array_index(d, shape, v.offset);
        self.arrays[array].written = true;
        let mut accesses = vec![RawAccess {
            kind: AccessKind::Write,
            array,
            subscripts: Vec::new(),
        }];
        self.reads(init, &mut accesses)?;
        let mut refs = Vec::new();
        collect_refs(init, &mut refs);
        let text = vec![
            Segment::Var(d.key.clone()),
            Segment::Text(" = "),
            Segment::Source(init.span),
            Segment::Text(";"),
        ];
        self.push_stmt(accesses, refs, init.span, text);
        Ok(())
    }

    /// End (after the `;`) of the expression statement starting at `start`: the first `;` at
    /// bracket depth 0, which must not come before the expression's end.
    /// Where the function-like macro call whose arguments hold offset `start` begins (its name),
    /// and the name, when `start` (the start of an expression statement's extent) lies inside
    /// such a call: a written statement never starts inside parentheses, so an unmatched `(`
    /// before it, within the statement (no `;`, `{` or `}` in between), right after an
    /// identifier, is a macro's call. For nested calls (`OUTER(INNER(x, i))`), the outermost.
    fn macro_call_start(&self, start: usize) -> Option<(usize, String)> {
        let mut found = None;
        let mut at = self.tokens.partition_point(|t| t.span.start < start);
        'outer: loop {
            let mut depth = 0i32;
            for j in (0..at).rev() {
                let t = &self.tokens[j];
                if t.kind != TokenKind::Punctuation {
                    continue;
                }
                match t.spelling.as_str() {
                    ";" | "{" | "}" => break 'outer,
                    ")" | "]" => depth += 1,
                    "[" => depth -= 1,
                    "(" if depth > 0 => depth -= 1,
                    "(" => {
                        let name = j.checked_sub(1).map(|k| &self.tokens[k])?;
                        if name.kind != TokenKind::Identifier {
                            return None;
                        }
                        found = Some((name.span.start, name.spelling.clone()));
                        at = j - 1;
                        continue 'outer;
                    }
                    _ => {}
                }
            }
            break;
        }
        found
    }

    fn statement_end(&self, start: usize, min_end: usize) -> Option<usize> {
        let first = self.tokens.partition_point(|t| t.span.start < start);
        let mut depth = 0i32;
        for t in &self.tokens[first..] {
            if t.kind != TokenKind::Punctuation {
                continue;
            }
            match t.spelling.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth < 0 {
                        return None;
                    }
                }
                ";" if depth == 0 => {
                    // Between the expression and its `;` only the closing parentheses of a
                    // macro call may lie (`x = SCALAR_VAL(0.5);` ends inside the call).
                    let tail =
                        &self.tokens[self.tokens.partition_point(|u| u.span.start < min_end)..];
                    let closing_only = tail
                        .iter()
                        .take_while(|u| u.span.start < t.span.start)
                        .all(|u| u.spelling == ")");
                    return (t.span.end >= min_end && closing_only).then_some(t.span.end);
                }
                _ => {}
            }
        }
        None
    }
}
