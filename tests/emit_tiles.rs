//! `--emit tiles`, `--emit tasks` and `--emit dot` on the paper's blur-Roberts example (see
//! polyhedral's tile_graph test for the derivation of its four tile dependences).

use polyhedral::ScheduleConfig;
use tiledflow::{compile_source, Emit, Options};

const BLUR_ROBERTS: &str = include_str!("../polyhedral/tests/data/blur-roberts.c");

fn emit(emit: Emit) -> String {
    let opts = Options {
        emit,
        schedule: ScheduleConfig {
            original: true,
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        },
        ..Options::default()
    };
    compile_source("blur-roberts.c", BLUR_ROBERTS, &opts)
        .unwrap()
        .text
}

#[test]
fn tiles_lists_domains_dependences_signatures_and_partitions() {
    let text = emit(Emit::Tiles);
    assert!(text.contains("tile domain N0 (2 dims)"), "{text}");
    assert!(text.contains("tile domain N1 (2 dims)"), "{text}");
    assert!(text.contains("S0 (leading, depth 2)"), "{text}");
    assert_eq!(
        text.matches("tile dependence N0 -> N1").count(),
        1,
        "{text}"
    );
    for (j, d) in ["[-1, -1]", "[-1, 0]", "[0, -1]", "[0, 0]"]
        .iter()
        .enumerate()
    {
        assert!(
            text.contains(&format!("d{j}: N0 -> N1, uniform {d}")),
            "{text}"
        );
    }
    assert!(text.contains("partition of N1: 4 classes"), "{text}");
    assert!(text.contains("IN {d0, d1, d2, d3} OUT {-}"), "{text}");
    assert!(text.contains("IN {d3} OUT {-}"), "{text}");
}

#[test]
fn tasks_lists_task_classes_with_their_inputs_and_idioms() {
    let text = emit(Emit::Tasks);
    assert!(
        text.contains("class N1: statements [S1], 2 key dims, tile sizes [4, 4], 4 task classes"),
        "{text}"
    );
    assert!(text.contains("N1.P0: IN {d0, d1, d2, d3} OUT {-} inputs [d0 N0[k0+1, k1+1]; d1 N0[k0+1, k1]; d2 N0[k0, k1+1]; d3 N0[k0, k1]]"), "{text}");
    assert_eq!(text.matches("point-to-point").count(), 4, "{text}");
}

#[test]
fn dot_is_a_graphviz_digraph_of_the_task_classes() {
    let text = emit(Emit::Dot);
    assert!(text.starts_with("digraph \"kernel_blur_roberts:"), "{text}");
    assert!(
        text.contains("subgraph cluster_0") && text.contains("subgraph cluster_1"),
        "{text}"
    );
    assert!(text.contains("N1.P0\\nIN {d0,d1,d2,d3}"), "{text}");
    assert!(text.trim_end().ends_with('}'), "{text}");
}

/// Interband parallelism and point-to-point synchronization in the generated C: every Roberts
/// tile names at most its four blur tiles as constant offsets of its own key; no enumeration loop
/// over sources and no barrier between the nests.
#[test]
fn generated_tasks_wait_for_their_own_sources_only() {
    let text = emit(Emit::C);
    assert!(
        text.contains("tf_task_input(tf_g, tf_st[0], tf_src); } /* d0 */"),
        "{text}"
    );
    assert!(
        !text.contains("for (long tf_s"),
        "no enumeration of sources"
    );
    assert!(!text.contains("soft barrier B"), "no barrier");
    assert_eq!(
        text.matches("tf_graph_begin()").count(),
        1,
        "one graph for both nests"
    );
}
