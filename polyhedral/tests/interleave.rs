//! Tiles of consecutive nests spawned together (`spawn_groups`): the group's
//! spawn loops, run by the test interpreter, visit every tile of every member once with its
//! partition, each member's tiles in its own spawn order, every tile after the tiles of the group
//! it depends on (enumerated by `tile_sources_ast`, an independent query of the tile
//! dependences), and a consumer's tiles before the host's last: interleaved, not appended.

mod common;

use polyhedral::{
    dependences, schedule, spawn_groups, tile_dependences, tile_graph, tile_sources_ast, Fuse,
    NestId, ScheduleConfig, SpawnMember,
};

/// A PolyBench kernel at MINI, or a file of `tests/data` (a name ending in `.c`).
fn scop_of(kernel: &str) -> frontend::ir::Scop {
    if kernel.ends_with(".c") {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(kernel);
        let (file, _) = frontend::parse_file(&path, &frontend::Options::default()).unwrap();
        file.scops.into_iter().next().unwrap()
    } else {
        common::kernel_scop(kernel, &["MINI_DATASET"])
    }
}

/// `expected`: the groups as (first nest, one past the last). Returns each group's members' spawn
/// orders.
fn check(kernel: &str, fuse: Fuse, tile: i64, expected: &[(usize, usize)]) -> Vec<Vec<Vec<usize>>> {
    let scop = scop_of(kernel);
    let deps = dependences(&scop).unwrap();
    let cfg = ScheduleConfig {
        fuse,
        tile_sizes: Some(vec![tile]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    let graph = tile_graph(&scop, &sched, &tile_deps).unwrap();
    // Each nest's partitions as code generation groups them: by the dependences they wait for.
    let partitions: Vec<Vec<Vec<String>>> = graph
        .nests
        .iter()
        .map(|nest| match &nest.partition {
            None => vec![vec![nest.domain.clone()]],
            Some(classes) => common::partition_groups(classes),
        })
        .collect();
    let members: Vec<SpawnMember<'_>> = sched
        .nests
        .iter()
        .enumerate()
        .map(|(k, nest)| SpawnMember {
            nest: NestId::new(k),
            n_dims: nest.tile_sizes.len(),
            tile_domain: &nest.tile_domain,
            partitions: &partitions[k],
            order: &nest.spawn_order,
            row_moves: &nest.row_moves,
        })
        .collect();
    let eligible = vec![true; members.len()];
    let groups = spawn_groups(&scop, &members, &eligible, &tile_deps, "c").unwrap();
    let found: Vec<(usize, usize)> = groups
        .iter()
        .map(|g| (g.members.start, g.members.end))
        .collect();
    assert_eq!(found, expected, "{kernel}: the groups");
    let all_orders: Vec<Vec<Vec<usize>>> = groups.iter().map(|g| g.orders.clone()).collect();
    for g in groups {
        let (group, ast, orders) = (g.members, g.tiles, g.orders);
        assert_eq!(orders.len(), group.len(), "{kernel}: an order per member");
        let visits = common::run(&ast, &[]);
        let text = common::show(&ast);
        // Every tile of every member once, named by its partition.
        let mut want = Vec::new();
        for k in group.clone() {
            for (c, sets) in partitions[k].iter().enumerate() {
                for set in sets {
                    for piece in common::disjuncts(set) {
                        want.extend(
                            common::points(&scop, &piece, &[])
                                .into_iter()
                                .map(|p| (format!("N{k}P{c}"), p)),
                        );
                    }
                }
            }
        }
        let mut got = visits.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{kernel}: the tiles\n{text}");
        let at = |k: usize, key: &[i64]| -> usize {
            visits
                .iter()
                .position(|(name, args)| {
                    name.starts_with(&format!("N{k}P")) && args.as_slice() == key
                })
                .unwrap_or_else(|| panic!("{kernel}: N{k}{key:?} is not spawned\n{text}"))
        };
        // Each member's tiles in the order the group spawns them in, the host's its own.
        assert_eq!(
            orders[0], sched.nests[group.start].spawn_order,
            "{kernel}: the host's order"
        );
        for k in group.clone() {
            let order = &orders[k - group.start];
            let n = sched.nests[k].tile_sizes.len();
            let mut dims = order.clone();
            dims.sort();
            assert!(
                order.is_empty() || dims == (0..n).collect::<Vec<_>>(),
                "{kernel}: N{k}'s order {order:?} is not one of its {n} tile loops"
            );
            let keys: Vec<Vec<i64>> = visits
                .iter()
                .filter(|(name, _)| name.starts_with(&format!("N{k}P")))
                .map(|(_, args)| {
                    if order.is_empty() {
                        args.clone()
                    } else {
                        order.iter().map(|&d| args[d]).collect()
                    }
                })
                .collect();
            assert!(
                keys.windows(2).all(|w| w[0] < w[1]),
                "{kernel}: N{k} out of its order\n{text}"
            );
        }
        // Every tile after its sources in the group.
        let mut checked = 0;
        for dep in &tile_deps {
            let (src, dst) = (dep.src.index(), dep.dst.index());
            if !group.contains(&src) || !group.contains(&dst) {
                continue;
            }
            let n = sched.nests[dst].tile_sizes.len();
            let coords: Vec<String> = (0..n).map(|d| format!("t{d}")).collect();
            let sources = tile_sources_ast(&scop, dep, &coords, "s").unwrap();
            for (name, key) in &visits {
                if !name.starts_with(&format!("N{dst}P")) {
                    continue;
                }
                let params: Vec<(&str, i64)> =
                    coords.iter().map(|c| c.as_str()).zip(key.clone()).collect();
                for (_, from) in common::run(&sources, &params) {
                    assert!(
                        at(src, &from) < at(dst, key),
                        "{kernel}: N{dst}{key:?} spawned before its source N{src}{from:?}\n{text}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 0, "{kernel}: no dependence inside the group");
        // Interleaved: the second member's first tile before the host's last.
        let first_member = visits
            .iter()
            .position(|(name, _)| name.starts_with(&format!("N{}P", group.start + 1)))
            .unwrap();
        let last_host = visits
            .iter()
            .rposition(|(name, _)| name.starts_with(&format!("N{}P", group.start)))
            .unwrap();
        assert!(
            first_member < last_host,
            "{kernel}: N{} after all of N{}\n{text}",
            group.start + 1,
            group.start
        );
    }
    all_orders
}

/// doitgen with its sums in an array (`tests/data/doitgen_arrays.c`) under `min`: the zeroing,
/// the products (a chain along `s`: the tiles after the first along it wait for their
/// predecessor, not for the zeroing, and go with it) and the copy back, one group.
#[test]
fn doitgen_spawns_its_three_nests_together() {
    check("doitgen_arrays.c", Fuse::Min, 4, &[(0, 3)]);
}

/// atax under `min`: `y`'s zeroing feeds only the last nest and starts no group; `tmp`'s zeroing,
/// its product and `y`'s product make one. `y`'s product runs its own tiles along `j` first
/// (`(j, i)`, `j` its parallel loop), and its tile `(j, i)` waits for the whole row `i` of `tmp`'s
/// product tiles: placed after those rows, its tiles rise along `i`, not along `j`, so it joins
/// spawned `i` first, in the order `(1, 0)`; the zeroing and `tmp`'s product keep theirs.
#[test]
fn atax_spawns_the_nests_of_tmp_and_y_together() {
    let orders = check("atax", Fuse::Min, 8, &[(1, 4)]);
    assert_eq!(orders, vec![vec![vec![], vec![], vec![1, 0]]]);
}

/// gemm has one nest: no group.
#[test]
fn a_single_nest_makes_no_group() {
    check("gemm", Fuse::Smart, 8, &[]);
}
