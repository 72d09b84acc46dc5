//! Accesses: the array elements and scalars a statement reads and writes, with their affine
//! subscripts, and the arrays they name.

use super::*;

impl<'a> Builder<'a> {
    /// An lvalue accessed as `kinds` (a write, or a read then a write).
    pub(super) fn access(
        &mut self,
        n: &Node,
        kinds: &[AccessKind],
        out: &mut Vec<RawAccess>,
    ) -> Result<()> {
        let target = strip(n);
        let mut subscripts_nodes = Vec::new();
        let mut base = target;
        while base.kind == Kind::Subscript && base.children.len() == 2 {
            subscripts_nodes.push(&base.children[1]);
            base = strip(&base.children[0]);
        }
        subscripts_nodes.reverse();
        let writes = kinds.contains(&AccessKind::Write);
        if matches!(base.kind, Kind::Unary(UnOp::Deref | UnOp::AddrOf)) {
            return Err(Refusal::new(
                target.span.start,
                self.code(target),
                "pointer operations are not supported",
            ));
        }
        if base.kind == Kind::Member {
            return Err(Refusal::new(
                target.span.start,
                self.code(target),
                "struct and union members are not supported",
            ));
        }
        let (Kind::DeclRef, Some(d)) = (&base.kind, &base.decl) else {
            let why = if writes {
                "only array elements and scalar variables may be assigned"
            } else {
                "only array elements and scalar variables may be read"
            };
            return Err(Refusal::new(target.span.start, self.code(target), why));
        };
        if !matches!(d.kind, DeclKind::Var | DeclKind::Parm) {
            return Err(Refusal::new(
                target.span.start,
                self.code(target),
                "not a variable",
            ));
        }
        if self.loops.iter().any(|l| l.key == d.key) {
            if writes {
                return Err(Refusal::new(
                    target.span.start,
                    self.code(target),
                    "assignment to a loop counter",
                ));
            }
            return Ok(()); // an iterator value: no memory access
        }
        if subscripts_nodes.is_empty() && self.counters.contains(&d.key) {
            return Err(Refusal::new(
                target.span.start,
                format!("`{}`", d.name),
                "loop counter used outside its loop",
            ));
        }
        let (rank, elem_type, extents) = array_shape(&d.ty)
            .map_err(|why| Refusal::new(target.span.start, format!("`{}`", d.name), why))?;
        if rank != subscripts_nodes.len() {
            let why = if subscripts_nodes.is_empty() {
                format!(
                    "the array `{}` is used as a pointer; it must be accessed element by element",
                    d.name
                )
            } else {
                format!(
                    "`{}` has {rank} dimension(s) but is accessed with {} subscript(s)",
                    d.name,
                    subscripts_nodes.len()
                )
            };
            return Err(Refusal::new(target.span.start, self.code(target), why));
        }
        let mut subscripts = Vec::new();
        for s in subscripts_nodes {
            subscripts.push(self.affine(s).map_err(|r| Refusal {
                why: format!("subscript is not affine: {}", r.why),
                ..r
            })?);
        }
        let array = self.array_index(d, (rank, elem_type, extents), target.span.start);
        for &kind in kinds {
            if kind == AccessKind::Write {
                self.arrays[array].written = true;
            }
            out.push(RawAccess {
                kind,
                array,
                subscripts: subscripts.clone(),
            });
        }
        Ok(())
    }

    pub(super) fn array_index(
        &mut self,
        d: &Decl,
        (rank, elem_type, extents): Shape,
        offset: usize,
    ) -> usize {
        if let Some(k) = self.arrays.iter().position(|a| a.key == d.key) {
            return k;
        }
        // An array parameter is a pointer (libclang gives it its type as written).
        let pointer = matches!(d.ty, CType::Pointer(_))
            || (d.kind == DeclKind::Parm && matches!(d.ty, CType::Array(..)));
        let mut extents = extents;
        if let (true, Some(first)) = (pointer, extents.first_mut()) {
            *first = None;
        }
        let block = self.block_decls.iter().any(|(k, _)| *k == d.key);
        // A scalar declared in the region is declared again by the generated code, and assigned.
        let elem_type = match &d.ty {
            CType::Scalar { unqualified, .. } if block => unqualified.clone(),
            _ => elem_type,
        };
        self.arrays.push(ArrayInfo {
            key: d.key.clone(),
            name: d.name.clone(),
            elem_type,
            rank,
            extents,
            pointer,
            restrict: d.restrict,
            offset,
            storage: if d.file_scope {
                Storage::File
            } else if block {
                Storage::Block
            } else {
                Storage::Local
            },
            written: false,
        });
        self.arrays.len() - 1
    }

    /// The reads of a right-hand side.
    pub(super) fn reads(&mut self, n: &Node, out: &mut Vec<RawAccess>) -> Result<()> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(n.span.start, code(text, n), why.to_string()));
        match &n.kind {
            Kind::IntLit | Kind::FloatLit | Kind::CharLit => Ok(()),
            Kind::SizeOf if n.int_value.is_some() => Ok(()),
            Kind::Subscript => self.access(n, &[AccessKind::Read], out),
            Kind::DeclRef => match n.decl.as_ref().map(|d| d.kind) {
                Some(DeclKind::EnumConstant) => Ok(()),
                Some(DeclKind::Var | DeclKind::Parm) => self.access(n, &[AccessKind::Read], out),
                _ => refuse("unsupported reference"),
            },
            Kind::Paren | Kind::Unexposed if n.children.len() == 1 => {
                self.reads(&n.children[0], out)
            }
            Kind::Cast => match n.children.last() {
                Some(c) if c.kind != Kind::TypeRef => self.reads(c, out),
                _ => refuse("unsupported cast"),
            },
            Kind::Unary(UnOp::Plus | UnOp::Minus | UnOp::Not | UnOp::LNot)
                if n.children.len() == 1 =>
            {
                self.reads(&n.children[0], out)
            }
            Kind::Unary(UnOp::AddrOf | UnOp::Deref) => {
                refuse("pointer operations are not supported")
            }
            Kind::Unary(UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec)
            | Kind::Binary(BinOp::Assign)
            | Kind::CompoundAssign(_) => {
                refuse("side effects nested inside an expression are not supported")
            }
            Kind::Binary(_) | Kind::Conditional => {
                for c in &n.children {
                    self.reads(c, out)?;
                }
                Ok(())
            }
            Kind::Call => {
                let callee = n.children.first().map(strip);
                let name = match callee {
                    Some(c)
                        if c.kind == Kind::DeclRef
                            && c.decl
                                .as_ref()
                                .is_some_and(|d| d.kind == DeclKind::Function) =>
                    {
                        c.decl.as_ref().map(|d| d.name.clone()).unwrap_or_default()
                    }
                    _ => return refuse("indirect calls may have side effects"),
                };
                if !is_pure_function(&name) {
                    return Err(Refusal::new(
                        n.span.start,
                        format!("call to `{name}`"),
                        "only pure math functions may be called inside a SCoP",
                    ));
                }
                for c in &n.children[1..] {
                    self.reads(c, out)?;
                }
                Ok(())
            }
            Kind::Member => refuse("struct and union members are not supported"),
            Kind::TooDeep => refuse("nested too deeply"),
            _ => refuse("unsupported expression"),
        }
    }
}
