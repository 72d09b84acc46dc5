//! `--emit tasks`'s work/span line (`polyhedral::work_span`) on programs whose tile graphs are
//! counted by hand.

use polyhedral::ScheduleConfig;
use tiledflow::{compile_source, Emit, Options};

fn tasks(name: &str, source: &str, tile: i64) -> String {
    let opts = Options {
        emit: Emit::Tasks,
        schedule: ScheduleConfig {
            tile_sizes: Some(vec![tile]),
            ..ScheduleConfig::default()
        },
        ..Options::default()
    };
    compile_source(name, source, &opts).unwrap().text
}

#[test]
fn a_wavefront_has_the_diagonal_as_its_critical_path() {
    // 63 x 63 points in 16 x 16 tiles: 4 x 4 tiles, each waiting for its upper and left
    // neighbours (3·4 + 4·3 = 24 pairs); the longest path crosses 4 + 4 - 1 = 7 tiles of 256.
    let text = tasks(
        "wave.c",
        "#define N 64\ndouble A[N][N];\nvoid wave(void) {\n  int i, j;\n#pragma scop\n  \
         for (i = 1; i < N; i++)\n    for (j = 1; j < N; j++)\n      \
         A[i][j] = A[i - 1][j] + A[i][j - 1];\n#pragma endscop\n}\n",
        16,
    );
    assert!(
        text.contains("work/span: 16 tasks, 24 synchronized pairs; work 4.096e3 instances, span 1.792e3 along 7 tasks; average parallelism 2.3"),
        "{text}"
    );
    // Brent: 4096 / (4096 / 2 + 1792) = 1.07; at most min(2, 4096 / 1792).
    assert!(text.contains("2: 1.1x-2.0x"), "{text}");
}

#[test]
fn independent_tiles_are_as_parallel_as_they_are_many() {
    let text = tasks(
        "par.c",
        "#define N 64\ndouble A[N][N];\nvoid par(void) {\n  int i, j;\n#pragma scop\n  \
         for (i = 0; i < N; i++)\n    for (j = 0; j < N; j++)\n      \
         A[i][j] = A[i][j] + 1.0;\n#pragma endscop\n}\n",
        16,
    );
    assert!(
        text.contains("work/span: 16 tasks, 0 synchronized pairs; work 4.096e3 instances, span 2.560e2 along 1 tasks; average parallelism 16.0"),
        "{text}"
    );
}

#[test]
fn parameters_take_the_estimates_values() {
    // A chain: x[i] needs x[i - 1], so the 1000 / 10 = 100 tiles at n = 1000 form one path.
    let text = tasks(
        "chain.c",
        "void chain(int n, double x[n]) {\n  int i;\n#pragma scop\n  \
         for (i = 1; i < n; i++)\n    x[i] = x[i - 1] + 1.0;\n#pragma endscop\n}\n",
        10,
    );
    assert!(text.contains("at [n] -> {  : n = 1000 }"), "{text}");
    assert!(text.contains("work/span"), "{text}");
    assert!(
        text.contains("along 100 tasks; average parallelism 1.0"),
        "{text}"
    );
}
