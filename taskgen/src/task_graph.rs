//! The static task graph: task classes (partitions of the nests) and soft barriers as nodes, one
//! edge per kept numbered dependence between the classes it connects; for `--emit dot` and for
//! the checks of [`check`].
//!
//! Redundant edges are removed before this graph is built, on tiles (`polyhedral::tile_graph`
//! drops a dependence only when each of its pairs of tiles is a path through kept ones). A
//! transitive reduction on this class graph would not be sound: a class-level path `A -> B -> C`
//! does not mean that the tile of `B` a given tile of `C` waits for is the one that waits for the
//! given tile of `A`, and classes have self-loops (a wavefront's interior waits for itself).
//! Implied dependences are drawn dashed between the nests' first classes, for the reader.

use crate::idiom::Idiom;
use crate::program::{InputKind, TaskProgram};
use petgraph::graph::{DiGraph, NodeIndex};
use polyhedral::{DepId, NestId};
use std::fmt::Write;

/// A node of the task graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// Partition `partition` of class (nest) `class`.
    Class { class: NestId, partition: usize },
    /// Soft barrier `b`.
    Barrier(usize),
}

/// An edge: numbered dependence `dep`, with its idiom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub dep: DepId,
    pub idiom: Idiom,
}

/// The class-level task graph of a program.
pub fn task_graph(prog: &TaskProgram) -> DiGraph<Node, Edge> {
    let mut g = DiGraph::new();
    let mut class_nodes: Vec<Vec<NodeIndex>> = Vec::with_capacity(prog.classes.len());
    for (k, class) in prog.classes.iter().enumerate() {
        class_nodes.push(
            (0..class.partitions.len())
                .map(|p| {
                    g.add_node(Node::Class {
                        class: NestId::new(k),
                        partition: p,
                    })
                })
                .collect(),
        );
    }
    let barrier_nodes: Vec<NodeIndex> = (0..prog.barriers.len())
        .map(|b| g.add_node(Node::Barrier(b)))
        .collect();
    for (b, bar) in prog.barriers.iter().enumerate() {
        let edge = Edge {
            dep: bar.dep,
            idiom: Idiom::SoftBarrier,
        };
        for (p, part) in prog.class(bar.src).partitions.iter().enumerate() {
            if part.signature.outs.contains(&bar.dep) {
                g.add_edge(
                    class_nodes[bar.src.index()][p],
                    barrier_nodes[b],
                    edge.clone(),
                );
            }
        }
    }
    for (k, class) in prog.classes.iter().enumerate() {
        for (p, part) in class.partitions.iter().enumerate() {
            for input in &part.inputs {
                let edge = Edge {
                    dep: input.dep,
                    idiom: prog.idioms[input.dep.index()],
                };
                if let InputKind::Barrier(b) = input.kind {
                    g.add_edge(barrier_nodes[b], class_nodes[k][p], edge);
                    continue;
                }
                for (q, src_part) in prog.class(input.src).partitions.iter().enumerate() {
                    if src_part.signature.outs.contains(&input.dep) {
                        g.add_edge(
                            class_nodes[input.src.index()][q],
                            class_nodes[k][p],
                            edge.clone(),
                        );
                    }
                }
            }
        }
    }
    g
}

/// Problems of a task program's graph: a kept dependence with no consuming or no producing class,
/// an edge between nests that goes backwards, an implied dependence with an idiom. Empty when
/// the program is consistent.
pub fn check(prog: &TaskProgram) -> Vec<String> {
    let mut problems = Vec::new();
    for (j, dep) in prog.graph.deps.iter().enumerate() {
        let id = DepId::new(j);
        let consumed = prog
            .class(dep.dst)
            .partitions
            .iter()
            .any(|p| p.signature.ins.contains(&id));
        let produced = prog
            .class(dep.src)
            .partitions
            .iter()
            .any(|p| p.signature.outs.contains(&id));
        match prog.idioms[j] {
            Idiom::Implied => {
                if consumed {
                    problems.push(format!("d{j} is implied but still waited for"));
                }
            }
            _ => {
                if !consumed || !produced {
                    problems.push(format!(
                        "d{j} ({} -> {}): consumed {consumed}, produced {produced}",
                        dep.src, dep.dst
                    ));
                }
            }
        }
    }
    let g = task_graph(prog);
    for e in g.edge_indices() {
        let Some((a, b)) = g.edge_endpoints(e) else {
            continue;
        };
        let nest = |n: NodeIndex| match g[n] {
            Node::Class { class, .. } => Some(class),
            Node::Barrier(_) => None,
        };
        if let (Some(x), Some(y)) = (nest(a), nest(b)) {
            if x > y {
                problems.push(format!("an edge from {x} back to {y}"));
            }
        }
    }
    problems
}

/// The task graph in Graphviz's dot language: one cluster per nest, its task classes inside,
/// edges labelled with the dependence and its idiom; implied dependences dashed.
pub fn to_dot(prog: &TaskProgram, title: &str) -> String {
    let g = task_graph(prog);
    let mut s = String::new();
    let _ = writeln!(s, "digraph \"{}\" {{", title.replace('"', "'"));
    s.push_str("  compound=true;\n  node [shape=box, fontname=\"monospace\"];\n");
    let id = |n: NodeIndex| format!("n{}", n.index());
    for (k, class) in prog.classes.iter().enumerate() {
        let _ = writeln!(s, "  subgraph cluster_{k} {{");
        let _ = writeln!(
            s,
            "    label=\"{} ({} key dims)\";",
            class.name, class.n_dims
        );
        for n in g.node_indices() {
            if let Node::Class {
                class: c,
                partition,
            } = g[n]
            {
                if c.index() == k {
                    let part = &prog.class(c).partitions[partition];
                    let ins: Vec<String> =
                        part.signature.ins.iter().map(DepId::to_string).collect();
                    let _ = writeln!(
                        s,
                        "    {} [label=\"{}.P{partition}\\nIN {{{}}}\"];",
                        id(n),
                        class.name,
                        ins.join(",")
                    );
                }
            }
        }
        s.push_str("  }\n");
    }
    for n in g.node_indices() {
        if let Node::Barrier(b) = g[n] {
            let _ = writeln!(s, "  {} [label=\"B{b}\", shape=ellipse];", id(n));
        }
    }
    for e in g.edge_indices() {
        let Some((a, b)) = g.edge_endpoints(e) else {
            continue;
        };
        let w = &g[e];
        let _ = writeln!(
            s,
            "  {} -> {} [label=\"{} {}\"];",
            id(a),
            id(b),
            w.dep,
            w.idiom
        );
    }
    let first = |k: NestId| {
        g.node_indices()
            .find(|&n| matches!(g[n], Node::Class { class, .. } if class == k))
    };
    for (j, dep) in prog.graph.deps.iter().enumerate() {
        if prog.idioms[j] != Idiom::Implied {
            continue;
        }
        if let (Some(a), Some(b)) = (first(dep.src), first(dep.dst)) {
            let _ = writeln!(
                s,
                "  {} -> {} [label=\"d{j} implied\", style=dashed];",
                id(a),
                id(b)
            );
        }
    }
    s.push_str("}\n");
    s
}
