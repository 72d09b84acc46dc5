//! The result: the checks on the whole region (aliasing), then the SCoP in the IR with its
//! ISL text (domains, schedules, access relations) and each statement's body as pieces of text
//! and references.

use super::*;

impl<'a> Builder<'a> {
    /// Refuses two variables of which one is written, one is a pointer that may point into the
    /// other, and neither is `restrict`. Distinct array variables never overlap; a scalar can be
    /// reached through a pointer only if it is declared at file scope or its address is taken
    /// in the function (`address_taken`).
    pub(super) fn check_aliasing(&self, address_taken: &HashSet<String>) -> Result<()> {
        let arrays: Vec<&ArrayInfo> = self
            .arrays
            .iter()
            .filter(|a| a.rank > 0 || a.storage == Storage::File || address_taken.contains(&a.key))
            .collect();
        for (k, x) in arrays.iter().enumerate() {
            for y in &arrays[k + 1..] {
                let pair_may_overlap = (x.pointer || y.pointer)
                    && !x.restrict
                    && !y.restrict
                    && may_alias_types(&x.elem_type, &y.elem_type);
                if pair_may_overlap && (x.written || y.written) {
                    let (w, other) = if x.written { (x, y) } else { (y, x) };
                    let how = if x.pointer && y.pointer {
                        "both are pointers".to_string()
                    } else {
                        let (p, o) = if x.pointer { (x, y) } else { (y, x) };
                        format!("`{}` is a pointer that may point into `{}`", p.name, o.name)
                    };
                    return Err(Refusal::new(
                        x.offset.max(y.offset),
                        format!("`{}` and `{}`", w.name, other.name),
                        format!(
                            "array parameters that may alias: `{}` is written and {how}; declare \
                             one of them `restrict`, or mark the nest with `#pragma scop` to \
                             promise that they do not overlap",
                            w.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish(
        self,
        function: &Function,
        region: &Region,
        lines: &LineIndex,
    ) -> Result<Scop> {
        let param_names: Vec<String> = self.params.iter().map(|p| p.name.clone()).collect();
        if let Some((name, offset)) = self
            .counter_names
            .iter()
            .find(|(n, _)| param_names.contains(n))
        {
            return Err(Refusal::new(
                *offset,
                format!("loop counter `{name}`"),
                "a parameter has the same name",
            ));
        }
        // Scalars that turned out to be parameters are values, not memory.
        let param_keys: HashSet<&str> = self.params.iter().map(|p| p.key.as_str()).collect();
        let mut new_id: Vec<Option<ArrayId>> = Vec::new();
        let mut arrays: Vec<Array> = Vec::new();
        let mut taken: HashSet<String> = param_names.iter().cloned().collect();
        taken.extend(self.counter_names.iter().map(|(n, _)| n.clone()));
        let mut block_names: HashSet<String> = HashSet::new();
        for a in &self.arrays {
            if param_keys.contains(a.key.as_str()) {
                new_id.push(None);
                continue;
            }
            let id = ArrayId(u32::try_from(arrays.len()).unwrap_or(u32::MAX));
            let name = match a.storage {
                Storage::Block => {
                    let name = self.block_scalar_name(a, &block_names);
                    block_names.insert(name.clone());
                    name
                }
                _ => a.name.clone(),
            };
            let isl_name = unique_isl_name(&name, &taken);
            taken.insert(isl_name.clone());
            arrays.push(Array {
                id,
                name,
                isl_name,
                elem_type: a.elem_type.clone(),
                rank: a.rank,
                extents: a.extents.clone(),
                storage: a.storage,
                written: a.written,
            });
            new_id.push(Some(id));
        }
        let array_keys: HashMap<&str, ArrayId> = self
            .arrays
            .iter()
            .zip(&new_id)
            .filter_map(|(a, id)| id.map(|id| (a.key.as_str(), id)))
            .collect();
        let prefix = if param_names.is_empty() {
            String::new()
        } else {
            format!("[{}] -> ", param_names.join(", "))
        };
        let sched_len = self
            .stmts
            .iter()
            .map(|s| s.schedule.len())
            .max()
            .unwrap_or(1);
        let mut statements = Vec::new();
        for (k, s) in self.stmts.iter().enumerate() {
            let id = StmtId(u32::try_from(k).unwrap_or(u32::MAX));
            let names = Names {
                iters: &s.iter_names,
                params: &param_names,
                outs: &[],
            };
            let tuple = format!("{id}[{}]", s.iter_names.join(", "));
            let domain = match &s.domain {
                Formula::True => format!("{prefix}{{ {tuple} }}"),
                f => format!("{prefix}{{ {tuple} : {} }}", names.formula(f)),
            };
            let mut dims: Vec<String> = s
                .schedule
                .iter()
                .map(|d| match d {
                    SchedDim::Pos(p) => p.to_string(),
                    SchedDim::Iter(depth, true) => s.iter_names[*depth].clone(),
                    SchedDim::Iter(depth, false) => format!("-{}", s.iter_names[*depth]),
                })
                .collect();
            dims.resize(sched_len, "0".to_string());
            let schedule = format!("{prefix}{{ {tuple} -> [{}] }}", dims.join(", "));
            let mut accesses: Vec<Access> = Vec::new();
            for a in &s.accesses {
                let Some(array) = new_id[a.array] else {
                    continue;
                };
                let relation = access_relation(
                    &prefix,
                    &tuple,
                    &arrays[array.index()].isl_name,
                    &a.subscripts,
                    &s.iter_names,
                    &param_names,
                )
                .map_err(|e| affine_refusal_at(s.span.start, self.text, s.span, e))?;
                let access = Access {
                    kind: a.kind,
                    array,
                    relation,
                };
                if !accesses.contains(&access) {
                    accesses.push(access);
                }
            }
            let body = self.body_pieces(s, &array_keys, &arrays)?;
            statements.push(Statement {
                id,
                iterators: s.iter_names.clone(),
                domain,
                schedule,
                accesses,
                body,
                span: s.span,
                loc: lines.loc(s.span.start),
            });
        }
        let params = self
            .params
            .iter()
            .map(|p| Param {
                name: p.name.clone(),
                c_type: p.c_type.clone(),
                storage: p.storage,
            })
            .collect();
        Ok(Scop {
            function: function.name.clone(),
            region: region.outer,
            insert_at: lines.line_start(function.span.start),
            loc: region.loc,
            params,
            context: format!("{prefix}{{ : }}"),
            arrays,
            statements,
            macros: Vec::new(),
            undefined_macros: Vec::new(),
        })
    }

    /// The C name of a scalar declared in the region, which the generated code declares at the
    /// head of the whole SCoP: its own name unless that name means anything else anywhere in
    /// the file (another variable, a function, a macro's text, which the declaration would
    /// shadow in the rest of the SCoP) or is one of `chosen` (the names of the others), else a
    /// fresh one.
    fn block_scalar_name(&self, a: &ArrayInfo, chosen: &HashSet<String>) -> String {
        let mine: HashSet<usize> = self
            .block_decls
            .iter()
            .filter(|(k, _)| *k == a.key)
            .map(|&(_, offset)| offset)
            .chain(
                self.stmts
                    .iter()
                    .flat_map(|s| &s.refs)
                    .filter(|r| r.key == a.key)
                    .map(|r| r.offset),
            )
            .collect();
        let used = |name: &str| {
            chosen.contains(name)
                || self.tokens.iter().any(|t| {
                    t.kind == TokenKind::Identifier
                        && t.spelling == name
                        && !(name == a.name && mine.contains(&t.span.start))
                })
        };
        if !used(&a.name) {
            return a.name.clone();
        }
        (1..)
            .map(|k| format!("{}_{k}", a.name))
            .find(|n| !used(n))
            .unwrap_or_else(|| a.name.clone())
    }

    /// Splits the statement's text at its iterator and variable references, after checking that
    /// every such reference is visible in the text (and every such name in the text is one).
    fn body_pieces(
        &self,
        s: &RawStmt,
        array_keys: &HashMap<&str, ArrayId>,
        arrays: &[Array],
    ) -> Result<Vec<BodyPiece>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Target {
            Iter(usize),
            Var(ArrayId),
        }
        let target_of = |key: &str| -> Option<Target> {
            if let Some(k) = s.iter_keys.iter().position(|i| i == key) {
                return Some(Target::Iter(k));
            }
            array_keys.get(key).map(|&id| Target::Var(id))
        };
        let sources: Vec<Span> = s
            .text
            .iter()
            .filter_map(|x| match x {
                Segment::Source(span) => Some(*span),
                _ => None,
            })
            .collect();
        let mut at: HashMap<usize, (Target, &str)> = HashMap::new();
        for r in &s.refs {
            let Some(target) = target_of(&r.key) else {
                continue;
            };
            let token = self
                .tokens
                .get(self.tokens.partition_point(|t| t.span.start < r.offset))
                .filter(|t| t.span.start == r.offset);
            let in_text = sources
                .iter()
                .any(|x| x.start <= r.offset && r.offset < x.end);
            let visible = r.in_main_file
                && in_text
                && token.is_some_and(|t| t.kind == TokenKind::Identifier && t.spelling == r.name);
            if !visible {
                return Err(Refusal::new(
                    s.span.start,
                    format!("`{}`", snippet(self.text, s.span)),
                    format!(
                        "the statement comes from a macro expansion that hides its use of `{}`",
                        r.name
                    ),
                ));
            }
            at.insert(r.offset, (target, r.name.as_str()));
        }
        let mut sensitive: HashSet<&str> = s.iter_names.iter().map(|n| n.as_str()).collect();
        sensitive.extend(arrays.iter().map(|a| a.name.as_str()));
        let mut pieces = Vec::new();
        for segment in &s.text {
            let span = match segment {
                Segment::Source(span) => *span,
                Segment::Text(text) => {
                    pieces.push(BodyPiece::Text(text.to_string()));
                    continue;
                }
                Segment::Var(key) => {
                    if let Some(&id) = array_keys.get(key.as_str()) {
                        pieces.push(BodyPiece::Var(id));
                    }
                    continue;
                }
            };
            let mut pos = span.start;
            let first = self.tokens.partition_point(|t| t.span.start < span.start);
            for t in self.tokens[first..]
                .iter()
                .take_while(|t| t.span.end <= span.end)
            {
                if t.kind != TokenKind::Identifier {
                    continue;
                }
                let target = match at.get(&t.span.start) {
                    Some((target, name)) if *name == t.spelling => *target,
                    _ if sensitive.contains(t.spelling.as_str()) => {
                        return Err(Refusal::new(
                            t.span.start,
                            format!("`{}`", t.spelling),
                            "this occurrence is not a plain reference to the variable (macro argument or token pasting), so the statement cannot be re-emitted",
                        ));
                    }
                    _ => continue,
                };
                if pos < t.span.start {
                    pieces.push(BodyPiece::Text(self.text[pos..t.span.start].to_string()));
                }
                pieces.push(match target {
                    Target::Iter(k) => BodyPiece::Iter(k),
                    Target::Var(id) => BodyPiece::Var(id),
                });
                pos = t.span.end;
            }
            if pos < span.end {
                pieces.push(BodyPiece::Text(self.text[pos..span.end].to_string()));
            }
        }
        Ok(pieces)
    }
}
