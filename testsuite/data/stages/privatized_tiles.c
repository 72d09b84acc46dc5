// tiledflow ../privatize/rowsum.c --emit tiles
// tiledflow ../privatize/rowsum.c --emit tiles --no-privatize
//
// The tile graphs of `../privatize/rowsum.c`'s three kernels, whose scalars (`s`, `t`, `acc`)
// are written in every iteration and read after the SCoP. Privatized (each task has its own
// copy), no dependence crosses tiles: one class per nest, no input, no output. Kept (every
// access to the scalar ordered), each nest is a chain of 64-row tiles, `N0[o0] -> N0[o0 + 1]`
// while the next tile exists (`64 o0 <= N - 65`), in four classes: the only tile (`N <= 64`),
// the first of several, the last, and those between.
//
// Checked by hand: the tile domains (`0 <= i0`, `64 i0 < N` for rows `0 <= i < N`); in
// `kernel_rowsum` the sum (`S1`) is the nest's deepest statement (depth 2, empty when
// `M <= 0`); in `kernel_square` privatized, the 2-D tiles (128 x 128) of `(i, j)` and `C[i]`
// (`S2`) scheduled at `(i, N - i)`, after the element `B[i][N - 1 - i]` it reads, hence its tile
// column `N - 128 o0 - 254 <= 128 o1 <= N - 128 o0`; without privatization `t` orders every
// `(i, j)`, and the band is the rows alone.
