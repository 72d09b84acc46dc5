//! Idiom selection: how each numbered tile dependence is synchronized, chosen to need the fewest
//! synchronizations. This is the one place that decides; code generation only follows it.
//!
//! streamrt's tokens are never consumed: a task's token, once produced, satisfies every task that
//! names it, before or after. So the paper's idioms map onto the runtime like this:
//! - point-to-point: the consumer names the producer's (stream, key) as an input: one edge per
//!   pair of tiles;
//! - broadcast (one producer tile, many consumers): the same, since a token is read by any number
//!   of consumers; OpenStream's `peek` (read without consuming) is what every input already is,
//!   and `tick` (consume after the peeks) has nothing to do, so neither is emitted;
//! - soft barrier (every one of N source tiles to every one of M target tiles): N·M edges become
//!   N + M through one soft barrier of streamrt (`tf_barrier_begin`: no body) that waits for the N
//!   sources and produces a token the M targets wait for. It is chosen only when it is exact (the relation is the full
//!   product of its sources and targets, so no target waits for more than it needs) and only
//!   between two different nests (the sources then all precede the targets in the sequential
//!   order, so the barrier cannot close a cycle);
//! - implied: transitive reduction proved every pair implied by a path of kept dependences, so
//!   no synchronization is emitted at all.
//!
//! Dynamic fusion and wavefronts need no idiom of their own: every tile of every nest is spawned
//! with only its point-to-point inputs, so a tile of a later nest starts as soon as its sources
//! are done (interband parallelism), and the tiles of a band start along a wavefront as their
//! predecessors finish, without skewing the band.

use polyhedral::NumberedDep;

/// How one dependence is synchronized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idiom {
    /// Each target names each of its sources.
    PointToPoint,
    /// One source tile read by every target.
    Broadcast,
    /// All sources to one barrier task, the barrier to all targets.
    SoftBarrier,
    /// Implied by other dependences: nothing emitted.
    Implied,
}

impl std::fmt::Display for Idiom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Idiom::PointToPoint => "point-to-point",
            Idiom::Broadcast => "broadcast",
            Idiom::SoftBarrier => "soft-barrier",
            Idiom::Implied => "implied",
        })
    }
}

/// The idiom of a dependence (see the module documentation for the rules).
pub fn choose(dep: &NumberedDep) -> Idiom {
    let shape = dep.shape;
    if dep.implied_by.is_some() {
        Idiom::Implied
    } else if shape.one_source && !shape.one_target {
        Idiom::Broadcast
    } else if shape.product
        && dep.src != dep.dst
        && !shape.one_source
        && !shape.one_target
        && dep.distance.is_none()
    {
        Idiom::SoftBarrier
    } else {
        Idiom::PointToPoint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polyhedral::Shape;

    fn dep(src: u32, dst: u32, shape: Shape, uniform: bool) -> NumberedDep {
        NumberedDep {
            src: polyhedral::NestId(src),
            dst: polyhedral::NestId(dst),
            origin: 0,
            relation: String::new(),
            distance: uniform.then(|| vec![1]),
            sources: String::new(),
            targets: String::new(),
            shape,
            implied_by: None,
        }
    }

    const MANY_TO_MANY: Shape = Shape {
        product: true,
        one_source: false,
        one_target: false,
    };

    #[test]
    fn a_full_product_between_nests_is_a_soft_barrier_but_not_inside_a_nest() {
        assert_eq!(choose(&dep(0, 1, MANY_TO_MANY, false)), Idiom::SoftBarrier);
        // Inside one nest a barrier could make a target wait for a later source: a cycle.
        assert_eq!(choose(&dep(1, 1, MANY_TO_MANY, false)), Idiom::PointToPoint);
    }

    #[test]
    fn one_source_is_a_broadcast_and_one_target_stays_point_to_point() {
        let one_source = Shape {
            product: true,
            one_source: true,
            one_target: false,
        };
        assert_eq!(choose(&dep(0, 1, one_source, false)), Idiom::Broadcast);
        // N sources into one target: N edges either way, a barrier would add one.
        let fan_in = Shape {
            product: true,
            one_source: false,
            one_target: true,
        };
        assert_eq!(choose(&dep(0, 1, fan_in, false)), Idiom::PointToPoint);
        let partial = Shape {
            product: false,
            one_source: false,
            one_target: false,
        };
        assert_eq!(choose(&dep(0, 1, partial, false)), Idiom::PointToPoint);
    }

    #[test]
    fn implied_dependences_need_nothing() {
        let mut d = dep(0, 0, MANY_TO_MANY, true);
        d.implied_by = Some((polyhedral::DepId(1), polyhedral::DepId(2)));
        assert_eq!(choose(&d), Idiom::Implied);
    }
}
