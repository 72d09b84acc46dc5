// tiledflow ../../../polybench/kernels/gemm/gemm.c --emit tasks -I ../../../polybench/utilities -DMINI_DATASET --tile-sizes 8
// tiledflow ../../../polybench/kernels/gemm/gemm.c --emit tasks -I ../../../polybench/utilities -DMINI_DATASET --tile-sizes 8 --target cuda
//
// gemm's task classes at MINI (NI = 20, NJ = 25, NK = 30) in tiles of 8: tiles `i0 <= 2`,
// `i1 <= 3`, `i2 <= 3` (48 tasks), a chain along `k` for each `(i, j)` (36 synchronized pairs),
// the first tile of each chain without input. The tile code line says what the CPU code of the
// tile does (its full tiles apart, the reduction jammed by 4); the cuda target writes kernels
// instead, and prints no such line.
//
// Checked by hand: the tile domain and counts above; the work (partial tiles counted as full:
// 48 x 8^3 = 24 576 instances) and span (a chain of 4 tiles, 2 048), average parallelism 12;
// the greedy bounds W / (W / p + S) to min(p, W / S): 1.7x-2.0x on 2 threads, 4.8x-8.0x on 8,
// 10.1x-12.0x on 64, 11.9x-12.0x on 1000.
