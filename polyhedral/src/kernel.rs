//! Register-tiled vector kernels: in a full tile whose innermost loops are a perfect nest of
//! three around one statement that accumulates (gemm's `C[i][j] += alpha * A[i][k] * B[k][j]`
//! under `i, k, j`), the code runs a block of rows by a few vectors of the statement's lane
//! loop (`j`) at once, with the reduction loop (`k`) innermost (here 4 rows by 4 vectors):
//!
//! ```text
//! for (i = ..; i <= ..; i += 4)
//!   for (j = ..; j <= ..; j += 4 * W)
//!     for (k = ..; k <= ..; k += 1) {
//!       TF_VD(C[i + 0][j + 0 * W]) += alpha * A[i + 0][k] * TF_VD(B[k][j + 0 * W]);
//!       ... 16 copies: rows i + 0 .. i + 3, vectors j + 0 * W .. j + 3 * W
//!     }
//! ```
//!
//! where `W` elements make one vector of the machine (`TF_VBYTES` bytes, set by the generated
//! file from the compiler's target macros) and `TF_VD` reads an element and the `W - 1` after it
//! as one vector of GCC's and clang's vector extension ([`scop_ir::lanes`] says which
//! occurrences are vectors and refuses text whose meaning would change). The 16 accumulators
//! (`C`'s elements, invariant along `k`) stay in registers for the whole `k` loop: one vector
//! load of `B` and one broadcast of `A` per row feed four multiplications and additions, where
//! the jammed code ([`crate::tile_code`]) loads and stores `C` every four steps. Measured on the
//! full tiles of gemm (`64³`, gcc 12 `-O3 -march=native -ffp-contract=off`, one thread):
//! 13.5 GFLOP/s jammed, 27.7 with 64-byte vectors (AVX-512), 17.6 against 13.4 with 32-byte
//! ones (AVX2); 16-byte vectors (SSE2) ran slower than the jammed code, so the kernel is only
//! compiled for 32 and 64 (`#if`), and the jammed code otherwise.
//!
//! ## The register block
//!
//! The block's shape depends on the vector size, and is chosen per size ([`shapes_for`]; the
//! generated code has one copy of the kernel per shape, under `#if` on `TF_VBYTES`):
//!
//! - 32-byte vectors (AVX, 16 registers): 6 rows by 2 vectors where the statement packs one
//!   operand at most, 4 by 2 otherwise (see "Six rows and the rest" below). With 4 by 4 the 16
//!   accumulators took every register, and GCC spilled the broadcast factors and products: on a
//!   Zen 5 core built with `-mno-avx512f`, a standalone loop over 128 x 128 x 64 tiles ran 42-47
//!   GFLOP/s in 4 by 4 and 57-60 in 4 by 2 (the packed vectors pinned, below); 6 by 2 ran as 4
//!   by 2 there, 3 by 4 and 4 by 3 slower than 4 by 4. At LARGE on one thread (`-march=native
//!   -mno-avx512f`, medians of 7 runs in rounds), 4 by 2 against the jammed code: gemm 1.33x,
//!   2mm 1.30x, symm 1.30x, syrk 1.27x, doitgen 1.06x.
//! - 64-byte vectors (AVX-512, 32 registers): 8 rows by 2 vectors where the panel the rows read
//!   along (the reduction's steps by the lanes: gemm's packed `B` tile) is larger than
//!   [`PANEL_IN_L1`], 4 by 4 where it is not. Each block of rows reads the whole panel, so 8
//!   rows read it half as often as 4, at the cost of 8 broadcasts per step instead of 4; while
//!   the panel stays in the L1 the broadcasts cost more than the panel's second reading. The
//!   same standalone loop on the Zen 5 core (137.9 GFLOP/s peak, `make peak-flops`), hot tiles
//!   and a sweep of gemm's tiles at LARGE in GFLOP/s: a 64 x 128 panel (64 KiB) 4 x 4 105 / 90,
//!   8 x 2 112 / 97 (8 x 3 and 6 x 4 between them); 64 x 64 (32 KiB) 4 x 4 116 / 100, 8 x 2 108 /
//!   94; 128 x 64 (64 KiB) 4 x 4 98 / 88, 8 x 2 110 / 102; 128 x 32 (32 KiB) 4 x 4 119 / 107, 8 x 2
//!   113 / 103. At LARGE on one thread (medians of 9 runs in rounds against 4 by 4 everywhere):
//!   gemm 1.08x, 2mm 1.05x, 3mm 1.08x, doitgen 1.21x (its reduction's trip count is clipped by
//!   `min`, so its panel's size is not known, and unknown panels take 8 rows), syrk 1.03x, symm,
//!   syr2k, trmm, correlation, covariance, cholesky, lu, ludcmp and gramschmidt within 1.5%;
//!   uniformly 8 by 2, symm (64 x 64 panels) had run 0.97x.
//!
//! A width takes its first shape whose order is kept (see below); a row read 5 rows below
//! before its update keeps 4 rows where 8 or 6 would run the two together.
//!
//! ## Six rows and the rest
//!
//! Without contraction (`-ffp-contract=off`, which keeps results bitwise the original's) each
//! multiply-add is two instructions, and on a Zen 3 core (AMD EPYC, AVX2) the blocks of 4 by 2
//! left the multipliers idle part of the time: per reduction step 8 multiplications, 8
//! additions, 4 broadcasts and 2 loads of the panel for 8 vectors. 6 rows by 2 vectors (12
//! accumulators, the 2 panel vectors and one broadcast: 15 of the 16 registers) share the loop
//! and the panel's loads among 12: a standalone loop over 240 x 128 x 128 tiles of gemm's form
//! on hot data ran 15.3 billion multiply-adds a second in 4 by 2 and 20.4 in 6 by 2 (5 by 2
//! 19.6, 8 by 1 16.3, 4 by 3 11.5, 3 by 3 14.0). The tiles' rows are powers
//! of two, which 6 does not divide: the blocks of 6 run while a whole one fits, then one block
//! of the rest (2 or 4 rows of a tile of 32, 64 or 128: [`KernelWidth::rest`]), the same code
//! with fewer rows. A statement that packs two operands (syr2k's sum of two products) would need
//! 16 registers for the accumulators and its packed vectors, and keeps 4 by 2 (measured level
//! with 6 by 2 on the whole kernel). Legality: the blocks split the rows into contiguous
//! pieces that need not start at a multiple of 6 (a tile of 256 rows starts at one of 256), so
//! the order is checked for every such split, as for lanes that end inside a block: the rows one
//! at a time outside the rest, and all the rows of the tile in one block. Measured at LARGE
//! (Zen 3, gcc 12, medians of per-round ratios of 7 rounds against 4 by 2, one thread / two):
//! gemm 0.86 / 0.87, 2mm 0.91 / 0.85, 3mm 0.86 / 0.86, doitgen 0.91 / 0.90, syrk 0.92 / 0.92,
//! lu 0.92 / 0.91, ludcmp 0.93 / 0.94, correlation 0.94 / 0.91, covariance 0.94 / 0.92, symm
//! 0.94 / 0.98, cholesky 0.97 / 0.96, trmm 0.995 / 0.98; outputs bitwise the same, syr2k's and
//! gramschmidt's code unchanged.
//!
//! Each element still sees its updates in the original order (`k` ascending for one `C[i][j]`),
//! and each lane computes the statement's own operations on its element, so the results are
//! bitwise the scalar code's.
//!
//! Legality is checked, not assumed: the new order (row blocks, lane blocks, `k`, row in block,
//! lane in block) must keep the order of every two instances of the tile that access one element
//! with one of them writing ([`crate::sink::order_kept`], for each vector width the kernel is
//! compiled for), and no two instances that differ only in the lane loop may conflict (a
//! vector's lanes run at once). The checks look at the tiles of the full-tile piece only.
//!
//! A kernel may sit inside loops of the tile (doitgen's `r` around `q, s, p`): it replaces only
//! the innermost three, and its fallback for other vector widths is the same part of the other
//! code ([`replace_nest`]). Statements over a scalar kept in an array of copies
//! ([`crate::materialize`]) are read as they are emitted, with the copies' subscripts
//! (`tf_x_sum[r][q][p] += A[r][q][s] * C4[s][p]`), so they qualify like any other array's:
//! measured at LARGE on 2 threads (medians of 9 runs in rounds), doitgen 45.9 -> 38.5 ms and
//! symm 65.1 -> 53.5 ms (its `temp2` sum).
//!
//! ## Packed operands
//!
//! An occurrence that walks memory across the lanes (syrk's `A[j][k]` for lanes `j`: a column)
//! has no vector load. When the statement does not write its array (no other statement runs
//! between the copy and the kernel's end, so other writers, in other nests or before the kernel
//! in the tile, have written it already) and its subscripts mention only the lane and
//! reduction iterators (`scop_ir::lanes::packed_refusal`), the kernel first
//! copies the elements it will read, over the reduction and lane loops' ranges (which the row
//! loop does not move), into a buffer of the thread's (below) with the lanes contiguous
//! (`tf_pack0[k - k0][j - j0] = A[j][k]`), and reads that buffer as vectors: a copy of 64 x 64
//! elements for 64 x 64 x 64 multiply-adds, and each lane still computes its own element's
//! operations on the same values. Where the tile's own order keeps the reduction innermost
//! (syr2k's, whose four products are contiguous along `k`), the kernel is built with the
//! reduction just outside the lanes. Measured at LARGE on 2 threads (medians of 7 runs in
//! rounds): syrk 124 -> 35 ms, syr2k 194 -> 105 ms.
//!
//! Operands already contiguous along the lanes (gemm's `B[k][j]`) are packed the same way
//! when they qualify: the rows of an array start wherever its allocation put them (`malloc`
//! and `calloc` align to 16 bytes, and a row of 1 100 doubles moves the next one by 32), so
//! half of the kernel's 32-byte loads straddled two cache lines; the buffer is aligned to 64
//! bytes and its rows adjacent. On gemm's full tiles (LARGE, one thread, the same binary with
//! page-aligned arrays beside) the kernel ran 0.28 s, 0.19 s on aligned arrays, and 0.21 s
//! with the operand packed. Whole kernels at LARGE on 2 threads (AMD EPYC, AVX2; medians of 9
//! runs in rounds): gemm 138 -> 104 ms, 2mm 161 -> 132, 3mm 271 -> 187, symm 109 -> 102,
//! doitgen 62.3 -> 59.9 (its buffer is filled for each `r`). Arrays other nests write (3mm's
//! `F` in `G = E * F`, the centred data of correlation and covariance) qualify as well, since
//! only the kernel's statement runs while the buffer is read: 3mm 249 -> 232 ms, correlation
//! 118 -> 107, covariance 128 -> 102 (medians of 9, the same conditions).
//!
//! ## Columns packed a line at a time
//!
//! The fill of an occurrence across the rows (syrk's `A[j][k]` for lanes `j`) read a column of
//! the array at every step of the reduction: 64 rows apart, 64 cache lines touched per step and
//! each of them again at the next 7 steps, once the tile's 32 KiB had left the L1. It now runs
//! a cache line of lanes at a time ([`Packs::across_rows`]): for 8 lanes (64 bytes of doubles)
//! along the whole reduction, so that each row's line read is used at once for 8 steps and each
//! buffer row gets one whole line. The fills along the rows keep their order (a row read
//! contiguously, gemm's `B[k][j]`). Measured at LARGE, paired against the fill before
//! (medians of per-round ratios, 7 to 9 rounds, 2-core Zen 3, one thread / two): syr2k, with two
//! such buffers, 0.76 / 0.78, syrk 0.92 / 0.94, cholesky 0.95 / 0.94; outputs bitwise the same;
//! no other PolyBench kernel's code changes.
//!
//! ## A written array packed
//!
//! The statement may also pack occurrences of the array it writes where the piece's tiles
//! never write what those occurrences read: no element that the statement reads of that array,
//! other than through the element it writes, is written by the piece's instances (checked with
//! ISL on the piece, `frozen_in_piece`; `scop_ir::lanes::packed_refusal`'s `frozen`). Then the
//! buffer holds the values every read would see. cholesky's `A[i][j] -= A[i][k] * A[j][k]`
//! in the tiles whose `k` lie below their `j` (the full ones) reads rows and columns of `A`
//! that other tiles finished; trmm's `B[i][j] += A[k][i] * B[k][j]` (`k > i`) reads the rows
//! below the tile's, which later tiles write; lu's and ludcmp's `A[i][j] -= A[i][k] * A[k][j]`
//! read the rows above. Packing the operand also keeps the accumulators in registers: the C
//! compiler had to store and load them at every step of the reduction, since the operand read
//! the same array. Measured at LARGE (Xeon, medians of 7 runs in rounds, two threads / one):
//! trmm 54.4 -> 25.8 ms / 98.7 -> 42.9, cholesky 199 -> 152 ms / 395 -> 304, lu 244 -> 209 /
//! 477 -> 407, ludcmp 245 -> 213 / 488 -> 407; the other 26 kernels' code is unchanged.
//! The factor that does not vary along the lanes (lu's and cholesky's `A[i][k]`) read the
//! written array too, so the accumulators still went through memory at every step; it now
//! goes to the scaled rows' buffer (below), one factor alone included, where the array is
//! frozen: at LARGE (medians of 9 runs in rounds, two threads / one) lu 194 -> 117 ms /
//! 365 -> 222, ludcmp 189 -> 120 / 359 -> 222, cholesky 139 -> 93 / 268 -> 176.
//!
//! A packed occurrence that its term multiplies first by scalars and numbers only (symm's
//! `alpha * B[i][j]` in `C[k][j] += alpha * B[i][j] * A[i][k]`, syr2k's `A[j][k] * alpha`) is
//! packed with them: the buffer holds that product, computed once per element by the same
//! operations on the same operands (C multiplies left to right, so it is a value of its own), and
//! the kernel multiplies on from there, one vector multiplication fewer per row and vector
//! (`scop_ir::lanes::render_packed`). Measured at LARGE (Xeon, medians of 9 runs in rounds):
//! syr2k 137.8 -> 130.5 ms on one thread and 69.2 -> 66.9 on two, symm 105.6 -> 103.0 and
//! 56.1 -> 56.0.
//!
//! ## The buffers are the thread's, not the task's stack
//!
//! The packed and scaled buffers are `static __thread` arrays (one per kernel and thread; a
//! task runs to its end on one thread, and no kernel calls another, so no two uses of one
//! buffer overlap). On the task's stack they made each tile function's frame 35 KB, and the
//! rest of the function (the general code of the partial tiles, its spills) was placed by
//! where the buffers put the stack pointer: cholesky's shifted grid (`tf_line0`), whose frame
//! is 64 bytes larger than the unshifted one's, ran 1.2x slower on one thread and on two for the
//! same loops in the assembly, and 8 KB of padding in the frame alone gave the speed back (AMD
//! EPYC Zen 4, medians of 15 in rounds). Thread-local, at LARGE (medians of 11 in rounds, one
//! thread / two): cholesky 0.299 -> 0.243 s / 0.161 -> 0.132 s, gemm, 2mm, 3mm, lu, ludcmp,
//! syrk, syr2k, symm, trmm, correlation and covariance within 4% either way (the noise of one
//! round to the next).
//!
//! ## Packed vectors in registers
//!
//! The vectors of a packed occurrence at one reduction step (gemm's
//! `tf_pack0[k][j .. j + 4 W]`) are the same for all the rows of a block, and GCC 12 folds
//! each of their loads into the multiplication that uses it: 16 vector loads and 4 broadcasts
//! per step for 16 multiplications and 16 additions, where 4 loads would do. On a core that
//! loads one 64-byte vector per cycle and multiplies and adds one each (AMD Zen 4, whose AVX-512
//! units are 256 bits wide), the loads bound the kernel. Each block's step now loads them once
//! into variables (`tf_pv<n>_<c>`, [`crate::KernelPart::PackVector`]) that an empty `asm`
//! statement (`TF_PIN`) claims to change, so the compiler can no longer fold them back, and the
//! rows' copies of the statement read those variables ([`pinned_packs`]: where the accumulators
//! and they take at most 3/4 of the registers). With AVX's 16 registers this began with the
//! blocks of 4 by 2 (see "The register block"): 4 by 4 accumulators filled them all. The same
//! values are read, so the results stay bitwise the same.
//! Measured on one core of an AMD EPYC (Zen 4, 2 cores, `make peak-flops`: 57.5 GFLOP/s): a
//! standalone loop over gemm's full 64^3 tiles on hot data 34.1 -> 38.2 GFLOP/s, and over all of
//! gemm's full tiles at LARGE in the tasks' order 25.6 -> 29.5.
//!
//! ## Scaled rows
//!
//! A packed kernel whose statement multiplies, before any factor along the lanes, two or more
//! factors that do not vary along them (gemm's `alpha * A[i][k]` in
//! `C[i][j] += alpha * A[i][k] * B[k][j]`: `scop_ir::lanes::has_scaled_prefix`) computed that
//! product for every vector: a scalar multiplication and a broadcast per row and reduction step
//! in each block of lanes, beside the four vector multiplications and additions they feed, on
//! the same two ports. The kernel now computes it once per row and reduction step, into a
//! buffer `tf_scaled[depth][rows]` filled in the row loop before the lane loop, and its copies
//! read the product from there (a broadcast from memory, or an operand of the multiplication
//! with AVX-512). C multiplies left to right, so the product is a value of its own: computed by
//! the same operations on the same operands, it is the same value, and the results stay bitwise
//! the original's. The product must read nothing that the statement writes (the fill runs
//! before the kernel's writes of the block), unless that array is frozen (see "A written array
//! packed": nothing the statement reads of it is written in the piece), and vary along the
//! reduction (otherwise the C compiler hoists it already). Measured on one core of the Xeon (LARGE, medians of 9 runs in
//! rounds, the same machine and hour): gemm 94.5 -> 84.9 ms on one thread and 52.9 -> 46.1 on
//! two, syrk 64.3 -> 58.2 and 33.5 -> 31.4, 2mm 112 -> 106 and 61.8 -> 59.9; a standalone loop over
//! gemm's full 64^3 tiles ran 31 -> 37 GFLOP/s (55 measured peak, `make peak-flops`).
//!
//! ## Lanes that end inside a block
//!
//! Tiles cut along the lanes (gemm's last `j` tile at LARGE: columns 1 088 to 1 099, 12 of
//! them) have a lane loop whose trip count no block of the kernel's vectors divides; they ran the
//! general code, 4% of gemm's time on one thread for 1% of its work. There the kernel runs the
//! lanes as whole blocks while the block's last lane is in the loop's range, then single
//! vectors, then single elements (the statement as it is, on the original arrays: the packed
//! and scaled buffers hold the same values), each run with the reduction loop inside it
//! (`KernelWidth::tail`), for the widths of which one vector at least is whole. With 64-byte
//! vectors a 32-byte one comes before the single elements (the statement's vector copy with
//! `TF_VD` reading 32 bytes: `taskgen::c_ast`), and a loop of 4 to 7 doubles qualifies too:
//! gemm's last `j` tile at LARGE (12 columns: 8 + 4) ran its last 4 as single elements, four
//! chains of 64 dependent multiply-adds per row block. The full tiles
//! keep whole blocks only. Legality: the runs split the lanes into contiguous pieces, and every
//! such split keeps the order of the conflicting pairs when two orders do: the lanes one at a
//! time outside the reduction (pairs in different runs are ordered by their lanes) and all the
//! lanes in one run (pairs in one run are ordered by the reduction, the row, then the lane), both
//! checked on the piece's tiles. Each element still sees its updates in the original order, so
//! the results stay bitwise the same. Measured at LARGE (Xeon, medians of 11 runs in rounds,
//! one thread / two): gemm 68.7 -> 68.0 ms / 39.6 -> 38.4, 2mm 88.8 -> 84.9 / 51.5 -> 48.8,
//! 3mm 143.6 -> 142.4 / 82.6 -> 80.9, correlation 76.3 -> 72.5 / 45.1 -> 42.3, covariance
//! 77.5 -> 70.7 / 45.7 -> 41.4, symm 89.1 -> 82.6 / 46.9 -> 45.3, trmm 86.0 -> 85.9 /
//! 49.6 -> 47.8, lu 427 -> 427 / 223 -> 215, ludcmp 425 -> 432 / 227 -> 222; the other 21
//! kernels' code is unchanged. In gemm's trace the cut tiles took 1.4 ms instead of 3.0.
//!
//! ## Accumulators
//!
//! Where the innermost two loops of a full tile are a row loop and a reduction loop around one
//! statement that accumulates into an element invariant along the reduction, but whose other
//! accesses are not contiguous along any loop (trisolv's `x[i] -= L[i][j] * x[j]`, cholesky's
//! `A[i][j] -= A[i][k] * A[j][k]`), the C compiler keeps the element in memory (the other
//! accesses may reach it) and runs one chain of dependent additions. The accumulator kernel runs
//! [`CHAIN_ROWS`] rows at once, each row's element in a local variable loaded before the
//! reduction loop and stored after it; the statement's text has the element's occurrences
//! replaced by that variable ([`scop_ir::lanes::render_accumulated`]). Checked: the new order
//! keeps every conflicting pair's, and no other access of the tile reaches an element while a
//! block of rows holds it (same outer iteration, same block of rows). The reduction loop gets
//! `TF_SCALAR_LOOP`: GCC 12 otherwise vectorizes it as in-order reductions with a shuffle per
//! element. Measured at one thread: cholesky (LARGE) 0.64 s -> 0.41 s, trisolv (EXTRALARGE,
//! 2 threads) 8.7 ms -> 5.7 ms against gcc's 10.2 ms; 8 rows ran cholesky slower (0.48 s) then.
//! Eight rows since (cholesky's update has run vector kernels since, and the kernels of this
//! form are matrix-vector sums: each row's additions one chain, as many chains as rows): on the
//! AMD EPYC (Zen 5) at EXTRALARGE, medians of 11 in rounds, one thread / two, against four rows:
//! trisolv 5.04 -> 3.88 ms / 2.98 -> 2.43, mvt 8.05 -> 7.43 / 4.46 -> 4.58, atax, bicg, gemver
//! and ludcmp (LARGE) within 1%; sixteen rows ran trisolv 6% slower than eight. Where the
//! block of rows qualifies as the jammed loop of `crate::rows` does, it is printed with its rows
//! as vector lanes, its loads prefetched ([`Kernel::row_lanes`], set by `crate::tile_code` with
//! `crate::rows::accumulator_lanes`: "Accumulators as lanes" there).
//!
//! ## Accumulators with a tail
//!
//! Where a row's reduction loop is followed by other statements of the same row, the rows still
//! run as accumulators: cholesky's tiles below the diagonal of `i` and on the diagonal of `j`
//! and `k` run, for each `i` and `j`, `A[i][j] -= A[i][k] * A[j][k]` along `k < j - 1`, then the
//! division of `A[i][j - 1]`, the reduction's last step and the update of `A[i][i]` (the
//! schedule puts them at `k = j - 1`), and their general code ran one chain of dependent
//! updates through memory per element: 37% of cholesky's time at LARGE for 4.5% of its work.
//! The kernel may name its row loop further out than the loop just around the reduction
//! ([`accumulator_kernel_over`]; `crate::tile_code` names `i` in the tiles full along it only):
//! the loops between (`j`) run inside each block of rows and may move the reduction's bounds,
//! none may move with the row. A block of eight rows loads its accumulators, runs their
//! reductions in one loop, stores them, and then runs each row's tail (the other items of the
//! loop around the reduction, as the plain code has them, the row at `row + r`) in row order
//! ([`Kernel::tail`]). Checked as the accumulators are, on that order: the reduction loop's
//! instances (the statement's at the points the loop's bounds give) in blocks of rows with the
//! row innermost, then every other instance row by row, must keep the order of every conflicting
//! pair, and no other access of the reduction may reach an element that a block holds.
//! cholesky at LARGE, paired against the general code (medians of per-round ratios, 9 rounds,
//! 2-core Zen 3): 0.81 of the time on one thread, 0.83 on two; outputs bitwise the same. With
//! the rows just outside the reduction instead (`j, i, k`: the 64 rows of the tile read again
//! for every `j`) it ran 0.94 and 0.96.
//!
//! ## Rows that end anywhere
//!
//! cholesky's tiles on the diagonal of `i` and `j` (full along `k` only) run
//! `A[i][j] -= A[i][k] * A[j][k]` for `j` up to `i - 1`: the rows of the reduction (`j`) end
//! inside the tile, at a row that moves with `i`, and no constant block of rows divides them.
//! There the blocks of eight rows run while a whole one fits, then the rows left one at a time
//! ([`Kernel::ragged`]; only around the reduction alone: no tail, no loop between). A block may
//! start at any row, so the order is checked with all the rows in one block (the reduction
//! outside the rows): pairs in different blocks, or in rows run one at a time, keep the rows'
//! order, and pairs in one block have the order they have in the whole block; no other access
//! may reach a held element from any row. cholesky at LARGE, paired against the code before
//! both kernels (9 rounds): 0.71 of the time on one thread, 0.75 on two (the tail's kernel
//! alone: 0.88 and 0.87 in the same rounds); syr2k, whose tiles on the diagonal of `i` and `j`
//! take it too, 0.96 and 0.94. Both outputs bitwise the same; no other PolyBench kernel's code
//! changes. The whole blocks as vector lanes (`crate::rows`' "Accumulators as lanes", checked
//! and printed so by hand in the compiler) ran level on cholesky (1.006 / 0.987 of the time)
//! and syr2k 6% slower on one thread: they stay scalar.
//!
//! ## Where gemm's time goes, and what did not help
//!
//! gemm at LARGE on one thread (Xeon, AVX-512, 61.6 GFLOP/s measured peak): a full 64³ tile
//! run again and again on the same data reaches 53.5 GFLOP/s (87%), the full tiles in the tasks'
//! order 45 (72%), the whole kernel 41.4 (67%): its 1 137 other tiles take 11 ms of 64 (the
//! first reduction tile of each output tile, which scales `C` by `beta` and touches it first, 16.4
//! us against 12.4), the runtime about 1.5. The copy of `B` is the largest loss: made from
//! `B`'s first 64 rows instead (kept in L2; a timing experiment, wrong results) the kernel runs
//! 1.17x faster; a tile's copy from L3 takes 1.35 us (0.61 from L2), and the streamed `B` pushes
//! `A`'s rows out of L2 (`A` read the same way: 1.04x). Measured and not kept (medians of 9 to
//! 15 runs in rounds, one thread / two): prefetching the next tile's `B` into L1 or L2 during a
//! tile, or the same tile's before its copy (0.98-1.01x), non-temporal prefetches (0.76-0.90x),
//! the copy made by the first block of rows' kernel as it reads `B` (level); `B` copied once in
//! tile order before the tasks, on 2 MiB pages (1.04x / 1.02x, 2 ms of copying included); a
//! shared copy per `(k, j)` tile, made by the first task that needs it in an arena of 2 MiB
//! pages, the next tile's copy prefetched along the row blocks (1.064x / 0.95x: the arena's first
//! touch is slow on this VM, 0.26 to 4.6 ms per 2 MiB page and 1.6 us per 4 KiB one, and on two
//! threads the first pass over the copies ran its tasks at 21-26 us instead of 14); tiles of 96
//! rows (`--tile-sizes 96,64,64`: 1.08x / 1.00x, 2mm and 3mm level), tile orders that reuse a
//! `B` tile across consecutive tasks (0.91-0.96x).

use crate::ast::{Ast, Expr, Kernel, KernelLoop, KernelWidth, OpKind, Packs, VectorLanes};
use crate::astgen::PointSchedule;
use crate::column::isl_text;
use crate::isl::{Set, UnionMap, UnionSet};
use crate::maps::{names, params_prefix, tuple};
use crate::sink::{conflicts, order_kept};
use crate::steps::{classify, next_instances, unit_steps, Shapes, INVARIANT};
use crate::tile_size::element_bytes;
use crate::Result;
use scop_ir::{Access, AccessKind, ArrayId, Scop, Statement};

/// The vector sizes (bytes) the kernel is compiled for.
pub const WIDTHS: [i64; 2] = [32, 64];

/// The register blocks (rows, vectors) a kernel may take with vectors of `width` bytes, the
/// first whose order is kept being taken; `panel` is the bytes of the lanes by the reduction
/// that one block of rows reads along (the packed operand's buffer, gemm's `B` tile), when its
/// trip counts are constants, and `packed` the statement's packed occurrences (each a vector
/// per vector of the block at a step). See "The register block" in the module doc: with AVX's
/// 16 registers 6 by 2 where its 12 accumulators and the packed vectors leave one register for
/// the broadcast factor ("Six rows and the rest"), else 4 by 2; with AVX-512's 32, 4 by 4 where
/// the panel stays in the L1 ([`PANEL_IN_L1`]) and 8 by 2 otherwise (or where its size is not
/// known: doitgen's reduction, clipped by `min`), which reads it half as often. A block of a
/// power of two rows must divide the row loop's trip count; six rows end with a block of the
/// rest ([`KernelWidth::rest`]).
pub fn shapes_for(width: i64, panel: Option<i64>, packed: usize) -> &'static [(i64, i64)] {
    match (width >= 64, panel) {
        (false, _) if (6 + packed as i64) * 2 < 16 => &[(6, 2), (4, 2)],
        (false, _) => &[(4, 2)],
        (true, Some(bytes)) if bytes <= PANEL_IN_L1 => &[(4, 4)],
        (true, _) => &[(8, 2), (4, 4)],
    }
}

/// The most bytes of a kernel's panel (see [`shapes_for`]) that stay in the L1 beside the rest
/// of a block's data: the smallest L1 data cache of the cores with AVX-512 (32 KiB; Zen 5 and
/// recent Xeons have 48).
pub const PANEL_IN_L1: i64 = 32 << 10;

/// The most lanes of elements of `elem` bytes that one block of any kernel shape runs
/// ([`shapes_for`]).
pub fn widest_block(elem: i64) -> i64 {
    // A panel of no bytes and one of unknown size take each of `shapes_for`'s arms.
    let lanes = |w: i64| [Some(0), None].map(|panel| shapes_for(w, panel, 0));
    WIDTHS
        .iter()
        .flat_map(|&w| lanes(w).into_iter().flatten().map(move |s| s.1 * w))
        .max()
        .unwrap_or(64)
        / elem.max(1)
}
/// The half vector that lanes ending inside a block take with 64-byte vectors (see "Lanes that
/// end inside a block" in the module doc).
pub const HALF_BYTES: i64 = 32;

/// The kernel for the full-tile code `plain` of `points` (built in the tile's own order), when
/// its innermost loops qualify (see the module doc); `None` otherwise. `fallback` is the code
/// of the same tiles for other vector widths, with `plain`'s loops around the kernel's (the
/// kernel's fallback is the part of it under them: see [`replace_nest`]). With
/// `lanes_may_end`, the lane loop's trip count need not be a multiple of the kernel's block
/// of lanes (tiles partial along the lanes: see "Lanes that end inside a block" in the module
/// doc).
pub(crate) fn vector_kernel(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
    fallback: &Ast,
    lanes_may_end: bool,
) -> Result<Option<Ast>> {
    let Some(found) = innermost_loops(plain, 3) else {
        return Ok(None);
    };
    let (a, b, c) = (found.loops[0].0, found.loops[1].0, found.loops[2].0);
    let (name, args) = found.user;
    let Some((stmt, write)) = sole_writer(scop, name, private) else {
        return Ok(None);
    };
    // The lane: the statement's iterator that is the innermost loop's counter, which no other
    // coordinate mentions.
    let Some(lane) = args.iter().position(|e| *e == Expr::Id(c.clone())) else {
        return Ok(None);
    };
    if args
        .iter()
        .enumerate()
        .any(|(k, e)| k != lane && e.mentions(c))
    {
        return Ok(None);
    }
    let out = scop.array(write.array);
    if out.rank == 0 {
        return Ok(None);
    }
    let refused = scop_ir::lanes::refusal(scop, stmt, lane, &out.elem_type).is_some();
    let elem = element_bytes(&out.elem_type) as i64;
    // The dimensions of the three loops, and which of the outer two is the reduction: the one
    // along which the statement writes one element again.
    let dims: Vec<usize> = [a, b, c]
        .iter()
        .map(|it| points.iterators.iter().position(|x| x == *it))
        .collect::<Option<_>>()
        .unwrap_or_default();
    let [da, db, dc] = dims[..] else {
        return Ok(None);
    };
    let ctx = points.context.ctx();
    let Some(Steps {
        sched,
        o,
        next,
        written,
    }) = steps_in_piece(points, piece, name, &write.relation)?
    else {
        return Ok(None);
    };
    let (row, red) = match (
        invariant(ctx, &next, da, &written)?,
        invariant(ctx, &next, db, &written)?,
    ) {
        (false, true) => (da, db),
        (true, false) => (db, da),
        _ => return Ok(None),
    };
    if invariant(ctx, &next, dc, &written)? {
        return Ok(None);
    }
    // Lanes run at once: no two instances that differ only along the lane loop may conflict.
    let pairs = instance_pairs(&sched, &o, &|d, a, b| {
        Some(if d == dc {
            format!("{a} != {b}")
        } else {
            format!("{a} = {b}")
        })
    })?;
    if !conflicts(ctx, scop, private, &sched)?
        .intersect(pairs)?
        .is_empty()?
    {
        return Ok(None);
    }
    // The loops' trip counts divide into whole rows and vectors, and the new order keeps every
    // conflicting pair's order, for each width.
    let (Some(rows_len), Some(lane_len)) = (
        trip_count(points, &found.loops, row),
        trip_count(points, &found.loops, dc),
    ) else {
        return Ok(None);
    };
    // Whether the kernel's order keeps the order of every conflicting pair when the lanes
    // run in blocks: `run` is a lane's block, `in_run` its place in the block (blocks of
    // `rows` rows, then the lanes' blocks, then the reduction, then the row and the lane inside
    // their blocks).
    let mut pos = [da, db, dc];
    pos.sort_unstable();
    // Whether the order keeps the order of every conflicting pair, with the rows' `block` and
    // place in it (`in_block`) and the lanes' `run` and place in it (`in_run`): the blocks of
    // rows, then the lanes' runs, then the reduction, then the places.
    let kept_with = |block: &str, in_block: &str, run: &str, in_run: &str| -> Result<bool> {
        let mut out: Vec<String> = o.clone();
        out[pos[0]] = block.to_string();
        out[pos[1]] = run.to_string();
        out[pos[2]] = o[red].clone();
        out.push(in_block.to_string());
        out.push(in_run.to_string());
        let new = rescheduled(&sched, &o, &out)?;
        order_kept(ctx, scop, private, &sched, &new)
    };
    // A block of `n` of the coordinate `v`: `(block, place in it)`.
    let aligned = |v: &str, n: i64| (format!("{v} - ({v} mod {n})"), format!("{v} mod {n}"));
    // Any split of `v` into contiguous blocks keeps the order when two orders do: `v` one at a
    // time outside the rest (pairs in different blocks are ordered by `v`) and all of `v` in
    // one block (pairs in one block are ordered as inside it).
    let any_split = |v: &str| {
        vec![
            (v.to_string(), "0".to_string()),
            ("0".to_string(), v.to_string()),
        ]
    };
    let Some(loops) = [row, dc, red]
        .iter()
        .map(|&d| kernel_loop(&found, &points.iterators[d]))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    if !blocks_fixed(&loops) {
        return Ok(None);
    }
    // Read-only operands along the lanes and the reduction are packed, where the statement
    // allows it (see `scop_ir::lanes::packed_refusal`) and the buffers can be filled before
    // the row loop: those that walk memory across the lanes must be (or there is no kernel),
    // those contiguous along them are for aligned rows (see the module doc).
    let frozen = frozen_in_piece(ctx, stmt, write, &sched)?;
    let packs = packs_for(
        scop,
        stmt,
        points,
        &found,
        args,
        lane,
        [row, dc, red],
        elem,
        lane_len,
        &out.elem_type,
        frozen,
    );
    if refused && packs.is_none() {
        return Ok(None);
    }
    // Where `lanes_may_end` (tiles partial along the lanes), lanes that end inside a block run
    // as whole blocks, then single vectors, then (64-byte vectors) a 32-byte one, then single
    // elements (`KernelWidth::tail`), for the widths of which one vector at least is whole (a
    // 32-byte one for 64-byte vectors): legal when every split of the lanes into contiguous
    // runs keeps the order (`any_split`). Rows likewise: blocks of a power of two that divides
    // the row loop's trip count are checked as they are, other blocks (six rows and the rest:
    // see the module doc) for any split. Each width takes the first of its shapes
    // (`shapes_for`) whose order is kept. The checks are shared between shapes and widths.
    let panel = trip_count(points, &found.loops, red).map(|depth| depth * lane_len * elem);
    let packed = packs.as_ref().map_or(0, |p| p.count);
    let mut checked: Vec<((String, String, String, String), bool)> = Vec::new();
    let mut widths = Vec::new();
    for w in WIDTHS {
        for &(rows, vectors) in shapes_for(w, panel, packed) {
            let block = vectors * (w / elem);
            let rest = rows_len % rows;
            // A power of two must divide the rows; its blocks are then checked as they are.
            let power_of_two = rows.count_ones() == 1;
            if rows_len < rows || (rest != 0 && power_of_two) {
                continue;
            }
            let row_orders = if power_of_two {
                vec![aligned(&o[row], rows)]
            } else {
                any_split(&o[row])
            };
            let tail = lane_len % block != 0;
            let lane_orders = if !tail {
                vec![aligned(&o[dc], block)]
            } else if lanes_may_end && lane_len >= HALF_BYTES.min(w) / elem {
                any_split(&o[dc])
            } else {
                continue;
            };
            let mut kept = true;
            'orders: for (b, ib) in &row_orders {
                for (r, ir) in &lane_orders {
                    let key = (b.clone(), ib.clone(), r.clone(), ir.clone());
                    let ok = match checked.iter().find(|(k, _)| *k == key) {
                        Some(&(_, ok)) => ok,
                        None => {
                            let ok = kept_with(b, ib, r, ir)?;
                            checked.push((key, ok));
                            ok
                        }
                    };
                    if !ok {
                        kept = false;
                        break 'orders;
                    }
                }
            }
            if kept {
                widths.push(KernelWidth {
                    bytes: w,
                    rows,
                    vectors,
                    tail,
                    rest,
                });
                break;
            }
        }
    }
    let Some(widest_rows) = widths.last().map(|w| w.rows) else {
        return Ok(None);
    };
    let scaled = packs
        .as_ref()
        .is_some_and(|p| scop_ir::lanes::has_scaled_prefix(stmt, lane, p.red, p.frozen));
    let kernel = Kernel {
        loops,
        rows: widest_rows,
        stmt: name.to_string(),
        args: args.to_vec(),
        vector: Some(VectorLanes {
            lane,
            elem_bytes: elem,
            widths,
            packs,
            scaled,
        }),
        row_lanes: None,
        fused: None,
        fallback: Ast::Block(Vec::new()),
        tail: Ast::Block(Vec::new()),
        ragged: false,
    };
    Ok(replace_nest(plain, fallback, &kernel))
}

/// The most bytes of packed buffers one kernel may put on its task's stack.
pub const MAX_PACK_BYTES: i64 = 128 << 10;

/// Whether a kernel whose statement has `count` packed occurrences loads each packed vector of a
/// reduction step once into a register for all the rows of its block (see "Packed vectors in
/// registers" in the module doc), with the register block `width`: when the accumulators and
/// those vectors take at most 3/4 of the target's vector registers (16 with 32-byte vectors, 32
/// with 64-byte ones), leaving the rest for the broadcast factors and the products.
pub fn pinned_packs(count: usize, width: &KernelWidth) -> bool {
    let registers = if width.bytes >= 64 { 32 } else { 16 };
    count > 0 && (width.rows + count as i64) * width.vectors * 4 <= 3 * registers
}

/// The packed occurrences of a vector kernel over `found` (the statement `stmt` at `args`, lanes
/// along its iterator `lane`; `dims` the row, lane and reduction dimensions of `points`,
/// `lane_len` the lane loop's trip count), when the statement can run with them packed: the
/// reduction loop's trip count is constant, its iterator is the statement's iterator as it is,
/// and the buffers fit [`MAX_PACK_BYTES`]. The buffers are filled before the row loop, which
/// takes the lane and reduction loops' bounds not to move with the rows nor the reduction's
/// with the lanes: every kernel's loops are so ([`blocks_fixed`]).
#[allow(clippy::too_many_arguments)]
fn packs_for(
    scop: &Scop,
    stmt: &Statement,
    points: &PointSchedule<'_>,
    found: &Nest<'_>,
    args: &[Expr],
    lane: usize,
    dims: [usize; 3],
    elem: i64,
    lane_len: i64,
    elem_type: &str,
    frozen: bool,
) -> Option<Packs> {
    let [_, _, red] = dims;
    let red_iter = &points.iterators[red];
    let r = args.iter().position(|e| *e == Expr::Id(red_iter.clone()))?;
    if args
        .iter()
        .enumerate()
        .any(|(k, e)| k != r && e.mentions(red_iter))
    {
        return None;
    }
    let depth = trip_count(points, &found.loops, red)?;
    let count = scop_ir::lanes::packed_refusal(scop, stmt, lane, r, elem_type, frozen).ok()?;
    if count as i64 * depth * lane_len * elem > MAX_PACK_BYTES {
        return None;
    }
    Some(Packs {
        count,
        red: r,
        lanes: lane_len,
        depth,
        frozen,
        across_rows: scop_ir::lanes::packed_across_rows(stmt, lane, r, frozen),
    })
}

/// Whether, in the instances of `sched` (a piece's tiles), no element of the array that `stmt`
/// writes (through `write`) is both written and read by another of its occurrences: then the
/// statement reads that array as if it were read-only there, and its occurrences across the
/// lanes can be packed (see "A written array packed" in the module doc).
fn frozen_in_piece<'c>(
    ctx: &'c crate::isl::Ctx,
    stmt: &Statement,
    write: &Access,
    sched: &UnionMap<'c>,
) -> Result<bool> {
    let instances = sched.clone().domain()?;
    let written_by = UnionMap::read(ctx, &write.relation)?;
    let written = written_by
        .clone()
        .intersect_domain(instances.clone())?
        .range()?;
    for read in stmt
        .accesses
        .iter()
        .filter(|a| a.array == write.array && a.kind == AccessKind::Read)
    {
        let read_by = UnionMap::read(ctx, &read.relation)?;
        if read_by.is_equal(&written_by)? {
            continue; // the written element itself
        }
        let read = read_by.intersect_domain(instances.clone())?.range()?;
        if !read.intersect(written.clone())?.is_empty()? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Rows one accumulator kernel iteration runs (independent chains of additions).
pub const CHAIN_ROWS: i64 = 8;

/// The accumulator kernel for the full-tile code `plain` of `points`, whose tiles are those of
/// the parameter set `piece`, when its innermost two loops qualify (see the module doc); `None`
/// otherwise.
pub(crate) fn accumulator_kernel(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
) -> Result<Option<Ast>> {
    accumulator_kernel_over(scop, points, plain, piece, private, None, false)
}

/// [`accumulator_kernel`] with the rows along loop `row` where one is named (the loops between
/// it and the reduction run inside each block of rows: see "Accumulators with a tail"); with
/// `ragged`, also where the rows' trip count is not a constant multiple of [`CHAIN_ROWS`] (see
/// "Rows that end anywhere").
pub(crate) fn accumulator_kernel_over(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
    row: Option<&str>,
    ragged: bool,
) -> Result<Option<Ast>> {
    let perfect = row.is_none().then(|| innermost_loops(plain, 2)).flatten();
    let (found, tail) = match perfect {
        Some(found) => (found, &[][..]),
        None => match row_with_tail(plain, row) {
            Some(found) => found,
            None => return Ok(None),
        },
    };
    let (name, args) = found.user;
    let mut kernels_in_tail = false;
    tail.iter()
        .for_each(|t| t.walk(&mut |n| kernels_in_tail |= matches!(n, Ast::Kernel(_))));
    if kernels_in_tail {
        return Ok(None);
    }
    let (row_iter, red_iter) = (found.loops[0].0, found.loops[found.loops.len() - 1].0);
    let Some((stmt, write)) = sole_writer(scop, name, private) else {
        return Ok(None);
    };
    if !accumulates_locally(scop, stmt, write) {
        return Ok(None);
    }
    let (Some(row), Some(red)) = (
        points.iterators.iter().position(|x| x == row_iter),
        points.iterators.iter().position(|x| x == red_iter),
    ) else {
        return Ok(None);
    };
    let whole = trip_count(points, &found.loops, row).is_some_and(|n| n % CHAIN_ROWS == 0);
    // Rows that end anywhere: only around the reduction alone (no tail, no loop between).
    let ragged = ragged && !whole && tail.is_empty() && found.loops.len() == 2;
    if !whole && !ragged {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    let Some(Steps {
        sched,
        o,
        next,
        written,
    }) = steps_in_piece(points, piece, name, &write.relation)?
    else {
        return Ok(None);
    };
    if !invariant(ctx, &next, red, &written)? || invariant(ctx, &next, row, &written)? {
        return Ok(None);
    }
    // The new order: row blocks, the reduction, the row in its block; with a tail, the block's
    // reductions first, then each row's tail in row order (see "Accumulators with a tail").
    let block = format!("{v} - ({v} mod {CHAIN_ROWS})", v = o[row]);
    let lane = format!("{} mod {CHAIN_ROWS}", o[row]);
    let mut out: Vec<String> = o.clone();
    out[row] = block.clone();
    out.push(lane.clone());
    let new = match tail.is_empty() {
        // Blocks that start anywhere: checked with all the rows in one block (see "Rows that
        // end anywhere").
        true if ragged => {
            let mut one_block = out.clone();
            one_block[row] = "0".into();
            one_block[o.len()] = o[row].clone();
            rescheduled(&sched, &o, &one_block)?
        }
        true => rescheduled(&sched, &o, &out)?,
        false => {
            let mut reduction = out.clone();
            reduction.insert(red, "0".into());
            let mut after: Vec<String> = o.clone();
            after[row] = block;
            after.splice(red..red, ["1".into(), lane]);
            // The instances the reduction loop runs: the statement's at the loop's points.
            let Some(looped) = loop_points(points, &found.loops[found.loops.len() - 1])? else {
                return Ok(None);
            };
            let mut reduced = UnionMap::empty(ctx)?;
            for map in sched.clone().intersect_range(looped)?.maps()? {
                if map.tuple_name(crate::isl::Side::In).as_deref() == Some(name) {
                    reduced = reduced.union(UnionMap::from_map(map)?)?;
                }
            }
            let rest = sched.clone().subtract(reduced.clone())?;
            rescheduled(&reduced, &o, &reduction)?.union(rescheduled(&rest, &o, &after)?)?
        }
    };
    if !order_kept(ctx, scop, private, &sched, &new)? {
        return Ok(None);
    }
    // While a block of rows runs, its elements live in the accumulators: no other access of
    // the tile may reach them in that time (same dimensions outside the reduction loop, the
    // row in the same block).
    let pairs = instance_pairs(&sched, &o, &|d, a, b| {
        (d != red && !(ragged && d == row)).then(|| {
            if d == row {
                format!("{a} - ({a} mod {CHAIN_ROWS}) = {b} - ({b} mod {CHAIN_ROWS})")
            } else {
                format!("{a} = {b}")
            }
        })
    })?;
    let instances = sched.clone().domain()?;
    let mut others = UnionMap::empty(ctx)?;
    for access in &stmt.accesses {
        if access.relation != write.relation {
            others = others.union(UnionMap::read(ctx, &access.relation)?)?;
        }
    }
    let others = others.intersect_domain(instances.clone())?;
    let held = written.intersect_domain(instances)?;
    // (x, y): x holds an element that y reaches otherwise.
    let reach = held.apply_range(others.reverse()?)?;
    if !reach.intersect(pairs)?.is_empty()? {
        return Ok(None);
    }
    let Some(loops) = found
        .loops
        .iter()
        .map(|(iter, _)| kernel_loop(&found, iter))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    // The loops inside the rows run once per block of rows: none may move with the row (the
    // reduction may move with a loop between, which runs as it is).
    let row_free = |l: &KernelLoop| !l.init.mentions(row_iter) && !l.cond.mentions(row_iter);
    if !loops[1..].iter().all(row_free) {
        return Ok(None);
    }
    let tail = (0..CHAIN_ROWS)
        .flat_map(|r| {
            tail.iter().map(move |t| {
                let mut t = t.clone();
                crate::ast::shift(&mut t, row_iter, r);
                t
            })
        })
        .collect();
    let kernel = Kernel {
        loops,
        rows: CHAIN_ROWS,
        stmt: name.to_string(),
        args: args.to_vec(),
        vector: None,
        row_lanes: None,
        fused: None,
        fallback: Ast::Block(Vec::new()),
        tail: Ast::Block(tail),
        ragged,
    };
    Ok(replace_nest(plain, plain, &kernel))
}

/// The points of `points`' schedule that the unit loop `l` of its code (bounds `x = init` to
/// `x <= hi` or `x < hi`) runs, its outer iterators and the tile coordinates free; `None` where
/// its bounds are not affine in ISL's syntax.
fn loop_points<'c>(
    points: &PointSchedule<'c>,
    l: &(&String, (&Expr, &Expr)),
) -> Result<Option<UnionSet<'c>>> {
    let (iter, (init, cond)) = *l;
    let Expr::Op(op @ (OpKind::Le | OpKind::Lt), operands) = cond else {
        return Ok(None);
    };
    let [Expr::Id(x), hi] = operands.as_slice() else {
        return Ok(None);
    };
    let mut ids = Vec::new();
    let (Some(lo), Some(hi)) = (isl_text(init, &mut ids), isl_text(hi, &mut ids)) else {
        return Ok(None);
    };
    if x != iter {
        return Ok(None);
    }
    let dims = &points.iterators;
    let params: Vec<String> = ids.into_iter().filter(|i| !dims.contains(i)).collect();
    let sign = if *op == OpKind::Le { "<=" } else { "<" };
    let text = format!(
        "{}{{ {} : {lo} <= {iter} {sign} {hi} }}",
        params_prefix(&params),
        tuple("", dims)
    );
    Ok(Some(UnionSet::read(points.context.ctx(), &text)?))
}

/// Whether the element that `stmt` assigns through `write` can be kept in a local accumulator
/// by replacing its occurrences in the text (`scop_ir::lanes::accumulator_refusal`, given the
/// statement's distinct relations to the assigned array).
pub(crate) fn accumulates_locally(scop: &Scop, stmt: &Statement, write: &Access) -> bool {
    let mut relations: Vec<&str> = stmt
        .accesses
        .iter()
        .filter(|x| x.array == write.array)
        .map(|x| x.relation.as_str())
        .collect();
    relations.sort_unstable();
    relations.dedup();
    scop_ir::lanes::accumulator_refusal(scop, stmt, relations.len()).is_none()
}

/// The pairs of instances of `sched` whose points `[o..]` (first) and `[o_..]` (second) meet
/// `relate(d, o_d_, o_d)` on each dimension `d` where it gives a constraint.
pub(crate) fn instance_pairs<'c>(
    sched: &UnionMap<'c>,
    o: &[String],
    relate: &dyn Fn(usize, &str, &str) -> Option<String>,
) -> Result<UnionMap<'c>> {
    let o2: Vec<String> = o.iter().map(|v| format!("{v}_")).collect();
    let conds: Vec<String> = (0..o.len())
        .filter_map(|d| relate(d, &o2[d], &o[d]))
        .collect();
    let cond = if conds.is_empty() {
        String::new()
    } else {
        format!(" : {}", conds.join(" and "))
    };
    let related = UnionMap::read(
        sched.ctx(),
        &format!("{{ {} -> {}{cond} }}", tuple("", o), tuple("", &o2)),
    )?;
    sched
        .clone()
        .apply_range(related)?
        .apply_range(sched.clone().reverse()?)
}

/// `sched` with its points `[o..]` mapped to `[out..]`.
fn rescheduled<'c>(sched: &UnionMap<'c>, o: &[String], out: &[String]) -> Result<UnionMap<'c>> {
    let to = UnionMap::read(
        sched.ctx(),
        &format!("{{ {} -> {} }}", tuple("", o), tuple("", out)),
    )?;
    sched.clone().apply_range(to)
}

/// Statement `name` of `scop` and its one write, when it has exactly one and accesses none of
/// the scalars kept in one variable per task (`private`).
pub(crate) fn sole_writer<'s>(
    scop: &'s Scop,
    name: &str,
    private: &[ArrayId],
) -> Option<(&'s Statement, &'s Access)> {
    let stmt = crate::scop::stmt_of_name(name).and_then(|s| scop.statements.get(s.index()))?;
    if stmt.accesses.iter().any(|x| private.contains(&x.array)) {
        return None;
    }
    let mut writes = stmt.accesses.iter().filter(|x| x.kind == AccessKind::Write);
    match (writes.next(), writes.next()) {
        (Some(write), None) => Some((stmt, write)),
        _ => None,
    }
}

/// What both kernels' checks start from: the schedule of the piece's tiles, the names of its
/// dimensions, each dimension's step for the statement, and the statement's written elements.
struct Steps<'c> {
    sched: UnionMap<'c>,
    o: Vec<String>,
    next: Vec<Option<UnionMap<'c>>>,
    written: UnionMap<'c>,
}

/// [`Steps`] of statement `name`, which writes `written`, in the tiles of `piece`; `None` when
/// the statement is not there.
fn steps_in_piece<'c>(
    points: &PointSchedule<'c>,
    piece: &Set<'c>,
    name: &str,
    written: &str,
) -> Result<Option<Steps<'c>>> {
    let sched = in_piece(points, piece)?;
    let o = names("o", points.iterators.len());
    let Some(next) = steps_of(points, &sched, name, &o)? else {
        return Ok(None);
    };
    let written = UnionMap::read(points.context.ctx(), written)?;
    Ok(Some(Steps {
        sched,
        o,
        next,
        written,
    }))
}

/// `points`' schedule restricted to the tiles of the parameter set `piece`.
pub(crate) fn in_piece<'c>(points: &PointSchedule<'c>, piece: &Set<'c>) -> Result<UnionMap<'c>> {
    let instances = points
        .schedule
        .clone()
        .domain()?
        .intersect_params(piece.clone())?;
    points.schedule.clone().intersect_domain(instances)
}

/// For statement `name` of `sched`: each dimension's step, instance to next instance (`None`
/// where the step does not move it); `None` when the statement is not there.
fn steps_of<'c>(
    points: &PointSchedule<'c>,
    sched: &UnionMap<'c>,
    name: &str,
    o: &[String],
) -> Result<Option<Vec<Option<UnionMap<'c>>>>> {
    let ctx = points.context.ctx();
    let mine = sched
        .maps()?
        .into_iter()
        .find(|m| m.tuple_name(crate::isl::Side::In).as_deref() == Some(name));
    let Some(mine) = mine else {
        return Ok(None);
    };
    let steps = unit_steps(ctx, o)?;
    Ok(Some(next_instances(&UnionMap::from_map(mine)?, &steps)?))
}

/// Whether a step of dimension `d` writes the element `written` gives again (`false` when the
/// step does not move the statement).
fn invariant<'c>(
    ctx: &'c crate::isl::Ctx,
    next: &[Option<UnionMap<'c>>],
    d: usize,
    written: &UnionMap<'c>,
) -> Result<bool> {
    let Some(n) = &next[d] else { return Ok(false) };
    let moved = n
        .clone()
        .apply_domain(written.clone())?
        .apply_range(written.clone())?;
    let mut shapes = Shapes::default();
    let mut all = true;
    for diff in moved.maps()? {
        all &= classify(ctx, diff.deltas()?, &mut shapes)? == INVARIANT;
    }
    Ok(all)
}

/// The innermost `n` loops of a perfect nest around one statement instance in `ast` (which
/// must be nothing but loops down to it, each with one child, with unit steps): the loops
/// (iterator, (init, cond)) outermost first, and the instance.
struct Nest<'a> {
    loops: Vec<(&'a String, (&'a Expr, &'a Expr))>,
    user: (&'a str, &'a [Expr]),
}

/// A reduction loop around one statement instance followed by other code (the tail), in the
/// body of the innermost of a chain of loops in `ast` (nothing but loops down to it, each with
/// one child, with unit steps): `for (row ..) .. for (mid ..) { for (red ..) S; tail }`. The
/// nest's loops are the row loop (`row`'s, or the innermost of the chain where `None`), the
/// loops between it and the reduction, and the reduction loop; the tail is the other items of
/// the innermost loop's body, empty only where a row is named.
fn row_with_tail<'a>(ast: &'a Ast, row: Option<&str>) -> Option<(Nest<'a>, &'a [Ast])> {
    let mut chain = Vec::new();
    let mut at = ast;
    while let Some(l) = at.unit_loop() {
        chain.push((l.iter, (l.init, l.cond)));
        at = l.body;
        let (red, tail) = match at {
            Ast::Block(items) => match items.as_slice() {
                [first, tail @ ..] => (first.unit_loop(), tail),
                [] => return None,
            },
            _ => (at.unit_loop(), &[][..]),
        };
        let Some(red) = red else { continue };
        let Some(Ast::User { name, args }) = red.body.sole() else {
            continue;
        };
        let from = match row {
            Some(row) => chain.iter().position(|(it, _)| it.as_str() == row)?,
            None if tail.is_empty() => return None,
            None => chain.len() - 1,
        };
        let mut loops = chain.split_off(from);
        loops.push((red.iter, (red.init, red.cond)));
        return Some((
            Nest {
                loops,
                user: (name, args),
            },
            tail,
        ));
    }
    None
}

fn innermost_loops(ast: &Ast, n: usize) -> Option<Nest<'_>> {
    let mut loops = Vec::new();
    let mut at = ast;
    while let Some(l) = at.unit_loop() {
        loops.push((l.iter, (l.init, l.cond)));
        at = l.body;
    }
    match at.sole()? {
        Ast::User { name, args } if loops.len() >= n => Some(Nest {
            loops: loops.split_off(loops.len() - n),
            user: (name, args),
        }),
        _ => None,
    }
}

/// Whether no loop of a kernel (outermost first: the rows, the lanes with vectors, the
/// reduction) has bounds that mention an outer one's iterator: the kernel runs a block of rows
/// (and of lanes) at once, with each inner loop's bounds evaluated at the block's first row
/// and lane, which is right only where they are the same for the whole block. trmm's
/// reduction `k` from `i + 1`, under `--fuse max`, ran every row of a block from the first
/// row's `k` and read the upper triangle of `A`, which the kernel never writes.
fn blocks_fixed(loops: &[KernelLoop]) -> bool {
    loops.iter().enumerate().all(|(k, inner)| {
        loops[..k]
            .iter()
            .all(|outer| !inner.init.mentions(&outer.iter) && !inner.cond.mentions(&outer.iter))
    })
}

/// The loop of `nest` over `iter`, as a kernel's loop.
fn kernel_loop(nest: &Nest<'_>, iter: &str) -> Option<KernelLoop> {
    let (it, (init, cond)) = nest.loops.iter().find(|(it, _)| it.as_str() == iter)?;
    Some(KernelLoop {
        iter: (*it).clone(),
        init: (*init).clone(),
        cond: (*cond).clone(),
    })
}

/// `ast` with the innermost loops (see [`innermost_loops`]) replaced by `kernel`, whose fallback
/// is the part of `fallback` (the same code, for other vector widths) that those loops make up:
/// the outer loops around the kernel run once, whichever code runs inside. `None` when `fallback`
/// does not have `ast`'s outer loops (then it cannot be cut where the kernel goes).
fn replace_nest(ast: &Ast, fallback: &Ast, kernel: &Kernel) -> Option<Ast> {
    match (ast, fallback) {
        (Ast::Block(items), Ast::Block(others)) if items.len() == others.len() => Some(Ast::Block(
            items
                .iter()
                .zip(others)
                .map(|(i, o)| replace_nest(i, o, kernel))
                .collect::<Option<_>>()?,
        )),
        (Ast::Block(items), _) if items.len() == 1 => {
            Some(Ast::Block(vec![replace_nest(&items[0], fallback, kernel)?]))
        }
        (_, Ast::Block(others)) if others.len() == 1 => replace_nest(ast, &others[0], kernel),
        (
            Ast::For {
                iter,
                init,
                cond,
                inc,
                body,
            },
            _,
        ) if kernel.loops.iter().all(|l| l.iter != *iter) => {
            let Ast::For {
                iter: other,
                body: other_body,
                ..
            } = fallback
            else {
                return None;
            };
            if other != iter {
                return None;
            }
            Some(Ast::For {
                iter: iter.clone(),
                init: init.clone(),
                cond: cond.clone(),
                inc: inc.clone(),
                body: Box::new(replace_nest(body, other_body, kernel)?),
            })
        }
        _ => Some(Ast::Kernel(Box::new(Kernel {
            fallback: fallback.clone(),
            ..kernel.clone()
        }))),
    }
}

/// The trip count of the loop over dimension `d` among `loops`, when its bounds are
/// `x = lo` to `x <= lo + c` (or `x < lo + c`) for one expression `lo`, or two integers.
fn trip_count(
    points: &PointSchedule<'_>,
    loops: &[(&String, (&Expr, &Expr))],
    d: usize,
) -> Option<i64> {
    let (iter, (init, cond)) = loops.iter().find(|(it, _)| **it == points.iterators[d])?;
    let Expr::Op(op, operands) = cond else {
        return None;
    };
    let [Expr::Id(x), hi] = operands.as_slice() else {
        return None;
    };
    if x != *iter {
        return None;
    }
    span(init, *op, hi)
}

/// The trip count of `for (x = init; x op hi; x += 1)` (`op` is `<=` or `<`) when it is a
/// constant.
pub(crate) fn span(init: &Expr, op: OpKind, hi: &Expr) -> Option<i64> {
    let extra = match op {
        OpKind::Le => 1,
        OpKind::Lt => 0,
        _ => return None,
    };
    let (hi_base, hi_c) = base_and_offset(hi)?;
    let (lo_base, lo_c) = base_and_offset(init)?;
    if hi_base != lo_base {
        return None;
    }
    Some(hi_c - lo_c + extra)
}

/// `e` as an expression plus a constant: `(Some(b), c)` for `b + c` or `b - c` (`-c`), `(None,
/// n)` for the number `n`, `(Some(e), 0)` otherwise; `None` for a number that does not parse.
/// The bounds of a piece's loops come both ways (`64 * t .. 64 * t + 63`, and `64 * t - 64 ..
/// 64 * t` where ISL wrote the tile's start from another coordinate equal to `t - 1`).
pub(crate) fn base_and_offset(e: &Expr) -> Option<(Option<&Expr>, i64)> {
    let number = |n: &str| n.parse::<i64>().ok();
    Some(match e {
        Expr::Int(n) => (None, number(n)?),
        Expr::Op(OpKind::Add, terms) => match terms.as_slice() {
            [base, Expr::Int(c)] => (Some(base), number(c)?),
            _ => (Some(e), 0),
        },
        Expr::Op(OpKind::Sub, terms) => match terms.as_slice() {
            [base, Expr::Int(c)] => (Some(base), -number(c)?),
            _ => (Some(e), 0),
        },
        _ => (Some(e), 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{dependences, schedule, tile_body_ast, ScheduleConfig};

    /// The kernel nodes of the CPU tile code of the one nest of `text`'s SCoP, tiles of 32.
    fn kernels(text: &str) -> Vec<Kernel> {
        kernels_in_tiles(text, 32)
    }

    /// [`kernels`] with tiles of `size`.
    fn kernels_in_tiles(text: &str, size: i64) -> Vec<Kernel> {
        let (file, _) = frontend::parse_source("t.c", text, &frontend::Options::default()).unwrap();
        let scop = file.scops.into_iter().next().expect("a SCoP");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![size]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(sched.nests.len(), 1, "{sched}");
        let p = sched.nests[0].tile_sizes.len();
        let (ast, _) =
            tile_body_ast(&scop, &sched, crate::NestId(0), &names("t", p), "c", &[]).unwrap();
        let mut out = Vec::new();
        fn find(ast: &Ast, out: &mut Vec<Kernel>) {
            match ast {
                Ast::Kernel(k) => out.push((**k).clone()),
                Ast::Block(items) => items.iter().for_each(|i| find(i, out)),
                Ast::For { body, .. } => find(body, out),
                Ast::If { then, els, .. } => {
                    find(then, out);
                    if let Some(e) = els {
                        find(e, out);
                    }
                }
                Ast::User { .. } => {}
            }
        }
        find(&ast, &mut out);
        out
    }

    fn source(stmt: &str) -> String {
        lanes(stmt, 1, 64)
    }

    /// [`source`] with the lanes (`j`) from `start` up to `end` (excluded).
    fn lanes(stmt: &str, start: i64, end: i64) -> String {
        format!(
            "double A[64][80], B[64][80], C[64][80];
void f(double alpha) {{
#pragma scop
  for (int i = 0; i < 64; i++)
    for (int k = 0; k < 64; k++)
      for (int j = {start}; j < {end}; j++)
        {stmt}
#pragma endscop
}}"
        )
    }

    #[test]
    fn bounds_written_from_either_side_give_their_trip_counts() {
        let int = |n: i64| Expr::Int(n.to_string());
        let id = |n: &str| Expr::Id(n.to_string());
        let op = |k: OpKind, v: Vec<Expr>| Expr::Op(k, v);
        let start = op(OpKind::Mul, vec![int(64), id("t")]);
        // `64 * t .. 64 * t + 63`, `64 * t - 64 .. 64 * t - 1` and `0 .. 63`: 64 each; bases
        // that differ have none.
        let cases = [
            (
                start.clone(),
                op(OpKind::Add, vec![start.clone(), int(63)]),
                OpKind::Le,
                Some(64),
            ),
            (
                op(OpKind::Sub, vec![start.clone(), int(64)]),
                start.clone(),
                OpKind::Lt,
                Some(64),
            ),
            (
                op(OpKind::Sub, vec![start.clone(), int(64)]),
                op(OpKind::Sub, vec![start.clone(), int(1)]),
                OpKind::Le,
                Some(64),
            ),
            (int(0), int(63), OpKind::Le, Some(64)),
            (
                start.clone(),
                op(OpKind::Add, vec![id("u"), int(63)]),
                OpKind::Le,
                None,
            ),
        ];
        for (init, hi, cmp, want) in cases {
            assert_eq!(span(&init, cmp, &hi), want, "{init:?} .. {hi:?}");
        }
    }

    #[test]
    fn a_few_lanes_take_half_vectors_of_64_bytes() {
        // Lanes 64 to 69 in the last tile: 6 doubles hold one 32-byte vector, and with 64-byte
        // vectors a half one (`HALF_BYTES`); lanes 64 to 66, 3 doubles, hold neither.
        let stmt = "C[i][j] += alpha * A[i][k] * B[k][j];";
        let six = kernels(&lanes(stmt, 0, 70));
        let last = six.last().and_then(|k| k.vector.as_ref()).expect("vectors");
        let shapes: Vec<_> = last.widths.iter().map(|w| (w.bytes, w.tail)).collect();
        assert_eq!(shapes, vec![(32, true), (64, true)], "{six:?}");
        assert_eq!(six.len(), 2, "{six:?}");
        let three = kernels(&lanes(stmt, 0, 67));
        assert_eq!(three.len(), 1, "not the last tile's 3 lanes: {three:?}");
    }

    #[test]
    fn a_contraction_gets_rows_by_vectors_around_its_reduction() {
        let found = kernels(&source("C[i][j] += alpha * A[i][k] * B[k][j];"));
        // The full tiles' and those of the first tile along `j`, which starts at 1.
        assert_eq!(found.len(), 2, "{found:?}");
        let k = &found[0];
        assert_eq!(k.stmt, "S0");
        let v = k.vector.as_ref().expect("vectors");
        assert_eq!(v.lane, 2, "the statement's iterators are (i, k, j)");
        assert_eq!(v.elem_bytes, 8);
        // 32 columns by 32 steps of the reduction, 8 KiB, stay in the L1: 4 rows by 4 vectors
        // of 8 doubles, or 6 rows by 2 vectors of 4 (AVX's 16 registers), then a block of the
        // last 2 of the 32 rows; both divide the columns.
        let shape = |bytes, rows, vectors, tail, rest| KernelWidth {
            bytes,
            rows,
            vectors,
            tail,
            rest,
        };
        assert_eq!(
            v.widths,
            vec![shape(32, 6, 2, false, 2), shape(64, 4, 4, false, 0)]
        );
        assert_eq!(k.rows, 4);
        // 31 columns (1 to 31): whole blocks, then single vectors, then single elements, for
        // either width.
        let partial = found[1].vector.as_ref().expect("vectors");
        assert_eq!(found[1].loops[1].init, Expr::Int("1".into()));
        assert_eq!(
            partial.widths,
            vec![shape(32, 6, 2, true, 2), shape(64, 4, 4, true, 0)]
        );
        // Rows, then lanes, then the reduction innermost.
        let by_arg = |e: &Expr| match e {
            Expr::Id(name) => name.clone(),
            other => panic!("{other:?}"),
        };
        let iters: Vec<&String> = k.loops.iter().map(|l| &l.iter).collect();
        assert_eq!(
            iters,
            vec![
                &by_arg(&k.args[0]),
                &by_arg(&k.args[2]),
                &by_arg(&k.args[1])
            ]
        );
    }

    #[test]
    fn six_rows_of_32_byte_vectors_end_with_a_block_of_the_rest_unless_two_operands_are_packed() {
        let shapes = |found: &[Kernel]| -> Vec<(i64, i64, i64)> {
            let v = found[0].vector.as_ref().expect("vectors");
            v.widths.iter().map(|w| (w.bytes, w.rows, w.rest)).collect()
        };
        // Tiles of 48 rows: eight blocks of 6, nothing left (48 lanes are no whole blocks of 4
        // vectors of 8 doubles); the tiles of the last 16 rows: two blocks of 6, then one of 4.
        let stmt = "C[i][j] += alpha * A[i][k] * B[k][j];";
        let found = kernels_in_tiles(&lanes(stmt, 0, 80), 48);
        assert_eq!(shapes(&found), vec![(32, 6, 0)], "{found:?}");
        assert_eq!(found[1].loops[0].init, Expr::Int("48".into()));
        assert_eq!(shapes(&found[1..]), vec![(32, 6, 4)], "{found:?}");
        // Tiles of 32 rows: five blocks of 6, then one of 2 (see the contraction above).
        assert_eq!(
            shapes(&kernels(&source(stmt))),
            vec![(32, 6, 2), (64, 4, 0)]
        );
        // Two packed operands (syr2k's columns `A[j][k]` and `B[j][k]`): 12 accumulators and 4
        // packed vectors would take all 16 registers, so 4 rows by 2 vectors.
        let two = "C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];";
        let found = kernels(&source(two));
        let v = found[0].vector.as_ref().expect("vectors");
        assert_eq!(v.packs.as_ref().map(|p| p.count), Some(2), "{found:?}");
        assert_eq!(shapes(&found), vec![(32, 4, 0), (64, 4, 0)], "{found:?}");
    }

    #[test]
    fn a_panel_larger_than_the_l1_takes_8_rows_of_64_byte_vectors_where_they_keep_the_order() {
        // Tiles of 64: 64 reduction steps by 64 columns of doubles, 32 KiB, stay in the L1 (4 by
        // 4); with the columns of two tiles in one (`j` up to 128, tiles of 128 along it), 64
        // KiB do not: 8 rows by 2 vectors, which read them half as often.
        let shapes = |found: &[Kernel]| -> Vec<(i64, i64, i64)> {
            found[0]
                .vector
                .as_ref()
                .expect("vectors")
                .widths
                .iter()
                .map(|w| (w.bytes, w.rows, w.vectors))
                .collect()
        };
        let stmt = "C[i][j] += alpha * A[i][k] * B[k][j];";
        let square = format!(
            "double A[128][128], B[128][128], C[128][128];
void f(double alpha) {{
#pragma scop
  for (int i = 0; i < 128; i++)
    for (int k = 0; k < 128; k++)
      for (int j = 0; j < 128; j++)
        {stmt}
#pragma endscop
}}"
        );
        assert_eq!(
            shapes(&kernels_in_tiles(&square, 64)),
            vec![(32, 6, 2), (64, 4, 4)]
        );
        assert_eq!(shapes_for(64, Some(64 * 128 * 8), 1), &[(8, 2), (4, 4)]);
        let wide = square
            .replace("[128][128]", "[128][256]")
            .replace("j < 128", "j < 256");
        let found = kernels_in_tiles(&wide, 128);
        assert_eq!(shapes(&found), vec![(32, 6, 2), (64, 8, 2)], "{found:?}");
        assert_eq!(found[0].rows, 8);
        // A row that reads the one 5 rows below before that one is updated, which an 8-row
        // block or a 6-row one would run beside it (each step of the reduction reading the
        // other's partial sum): 4 rows, whose blocks keep the two apart.
        let apart = wide
            .replace("C[128][256]", "C[136][256]")
            .replace(stmt, "C[i][j] += C[i + 5][j] * B[k][j];");
        let found = kernels_in_tiles(&apart, 128);
        assert!(!found.is_empty(), "{apart}");
        assert_eq!(shapes(&found), vec![(32, 4, 2), (64, 4, 4)], "{found:?}");
    }

    #[test]
    fn a_lane_carried_dependence_or_other_meanings_get_no_kernel() {
        // Each lane reads the element the previous lane writes.
        assert!(kernels(&source("C[i][j] += C[i][j - 1] * A[i][k];")).is_empty());
        // The written element moves with k only: the kernel runs rows of k around an innermost
        // i (the writes of one element keep their order, the last one stays).
        let found = kernels(&source("C[k][j] = alpha * A[i][k] * B[k][j];"));
        assert_eq!(found.len(), 2, "{found:?}");
        // Text that means something else on vectors.
        assert!(kernels(&source("C[i][j] += A[i][k] > 0 ? B[k][j] : 0.0;")).is_empty());
    }

    #[test]
    fn a_written_array_is_packed_where_the_piece_does_not_write_what_it_reads() {
        // cholesky's `A[i][j] -= A[i][k] * A[j][k]`: tiles whose `k` lie below their `j` read
        // rows and columns of `A` that they do not write; a tile on the diagonal writes what
        // it reads.
        let scop = crate::polybench_scop("cholesky");
        let (stmt, write) = sole_writer(&scop, "S0", &[]).expect("S0 writes A alone");
        let ctx = crate::isl::Ctx::shared().unwrap();
        let piece =
            |set: &str| UnionMap::read(ctx, &format!("{{ S0[i, j, k] -> [i, j, k] : {set} }}"));
        let below = piece("16 <= i < 24 and 8 <= j < 16 and 0 <= k < 8").unwrap();
        assert!(frozen_in_piece(ctx, stmt, write, &below).unwrap());
        let diagonal = piece("16 <= i < 24 and 8 <= j < 16 and 8 <= k < j").unwrap();
        assert!(!frozen_in_piece(ctx, stmt, write, &diagonal).unwrap());
        // In code: tiles of 32 over 128 rows, the transposed occurrence packed.
        let text = "double A[128][128];
void f(void) {
#pragma scop
  for (int i = 0; i < 128; i++)
    for (int j = 0; j < i; j++)
      for (int k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
#pragma endscop
}";
        let found = kernels(text);
        let packs: Vec<_> = found
            .iter()
            .filter_map(|k| k.vector.as_ref()?.packs.as_ref())
            .collect();
        assert!(
            !packs.is_empty() && packs.iter().all(|p| p.frozen && p.count == 1),
            "{found:?}"
        );
        // The row's factor `A[i][k]`, read from the written array, comes from a buffer.
        assert!(
            found
                .iter()
                .filter_map(|k| k.vector.as_ref())
                .all(|v| v.packs.is_none() || v.scaled),
            "{found:?}"
        );
    }

    #[test]
    fn chains_keep_their_elements_in_accumulators_where_nothing_else_reaches_them() {
        // Rows i of x accumulate along k; in the full tiles below the diagonal the x[k] read are
        // other rows' elements: accumulators.
        let solve = "double L[128][128], x[128];
void f(void) {
#pragma scop
  for (int i = 0; i < 128; i++)
    for (int k = 0; k < i; k++)
      x[i] -= L[i][k] * x[k];
#pragma endscop
}";
        let found = kernels(solve);
        assert!(
            found
                .iter()
                .any(|k| k.vector.is_none() && k.rows == CHAIN_ROWS),
            "{found:?}"
        );
        // The same rows read through another subscript in the same tiles: none.
        let update = "double W[64][64], B[64][64];
void f(void) {
#pragma scop
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++)
      for (int k = 0; k < 64; k++)
        W[i][j] -= W[i][k] * B[j][k];
#pragma endscop
}";
        assert!(kernels(update).iter().all(|k| k.vector.is_some()));
    }
}
