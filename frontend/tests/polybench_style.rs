//! Whole kernels written the PolyBench way (size macros, `_PB_` bound macros, `SCALAR_VAL`,
//! fixed-size and variable-length array parameters), read from `tests/data/` with `parse_file`.
//! Expectations were derived by hand from the kernels' loops.

use std::path::PathBuf;

use frontend::{parse_file, scop_to_string, Options};
use pretty_assertions::assert_eq;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The SCoPs of a data file in text form, `REGION` and `INSERT` standing for the region and
/// the function start (found by string search in the file).
fn check(name: &str, function_start: &str, expected: &str) {
    let path = data(name);
    let text = std::fs::read_to_string(&path).expect("test data");
    let (file, diags) = parse_file(&path, &Options::default()).expect("parses");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.text, text);
    let start = text.find("#pragma scop").expect("pragma");
    let end_pragma = text.find("#pragma endscop").expect("endscop");
    let end = end_pragma + "#pragma endscop\n".len();
    let insert = text.find(function_start).expect("function start");
    let expected = expected
        .replace("REGION", &format!("{start}..{end}"))
        .replace("INSERT", &insert.to_string());
    let got: String = file.scops.iter().map(scop_to_string).collect();
    assert_eq!(got, expected);
}

#[test]
fn gemm() {
    check(
        "gemm.c",
        "static void kernel_gemm",
        "scop in kernel_gemm at 9:1 region REGION insert_at INSERT
context { : }
array A0 C: double rank 2 local written
array A1 beta: double rank 0 local
array A2 alpha: double rank 0 local
array A3 A: double rank 2 local
array A4 B: double rank 2 local
S0 at 12:7: @{C}[${i}][${j}] *= @{beta};
  domain { S0[i, j] : i >= 0 and i <= 39 and j >= 0 and j <= 39 }
  schedule { S0[i, j] -> [0, i, 0, j, 0, 0, 0] }
  read { S0[i, j] -> C[i, j] }
  write { S0[i, j] -> C[i, j] }
  read { S0[i, j] -> beta[] }
S1 at 15:9: @{C}[${i}][${j}] += @{alpha} * @{A}[${i}][${k}] * @{B}[${k}][${j}];
  domain { S1[i, k, j] : i >= 0 and i <= 39 and k >= 0 and k <= 39 and j >= 0 and j <= 39 }
  schedule { S1[i, k, j] -> [0, i, 1, k, 0, j, 0] }
  read { S1[i, k, j] -> C[i, j] }
  write { S1[i, k, j] -> C[i, j] }
  read { S1[i, k, j] -> alpha[] }
  read { S1[i, k, j] -> A[i, k] }
  read { S1[i, k, j] -> B[k, j] }
",
    );
}

#[test]
fn jacobi_2d() {
    check(
        "jacobi-2d.c",
        "static void kernel_jacobi_2d",
        "scop in kernel_jacobi_2d at 14:1 region REGION insert_at INSERT
context { : }
array A0 B: double rank 2 local written
array A1 A: double rank 2 local written
S0 at 18:9: @{B}[${i}][${j}] = SCALAR_VAL(0.2) * (@{A}[${i}][${j}] + @{A}[${i}][${j}-1] + @{A}[${i}][1+${j}] + @{A}[1+${i}][${j}] + @{A}[${i}-1][${j}]);
  domain { S0[t, i, j] : t >= 0 and t <= 19 and i >= 1 and i <= 28 and j >= 1 and j <= 28 }
  schedule { S0[t, i, j] -> [0, t, 0, i, 0, j, 0] }
  write { S0[t, i, j] -> B[i, j] }
  read { S0[t, i, j] -> A[i, j] }
  read { S0[t, i, j] -> A[i, j - 1] }
  read { S0[t, i, j] -> A[i, j + 1] }
  read { S0[t, i, j] -> A[i + 1, j] }
  read { S0[t, i, j] -> A[i - 1, j] }
S1 at 21:9: @{A}[${i}][${j}] = SCALAR_VAL(0.2) * (@{B}[${i}][${j}] + @{B}[${i}][${j}-1] + @{B}[${i}][1+${j}] + @{B}[1+${i}][${j}] + @{B}[${i}-1][${j}]);
  domain { S1[t, i, j] : t >= 0 and t <= 19 and i >= 1 and i <= 28 and j >= 1 and j <= 28 }
  schedule { S1[t, i, j] -> [0, t, 1, i, 0, j, 0] }
  write { S1[t, i, j] -> A[i, j] }
  read { S1[t, i, j] -> B[i, j] }
  read { S1[t, i, j] -> B[i, j - 1] }
  read { S1[t, i, j] -> B[i, j + 1] }
  read { S1[t, i, j] -> B[i + 1, j] }
  read { S1[t, i, j] -> B[i - 1, j] }
",
    );
}

#[test]
fn seidel_2d_with_parameters() {
    check(
        "seidel-2d.c",
        "static void kernel_seidel_2d",
        "scop in kernel_seidel_2d at 12:1 region REGION insert_at INSERT
param tsteps: int local
param n: int local
context [tsteps, n] -> { : }
array A0 A: double rank 2 local written
S0 at 16:9: @{A}[${i}][${j}] = (@{A}[${i}-1][${j}-1] + @{A}[${i}-1][${j}] + @{A}[${i}-1][${j}+1]
                   + @{A}[${i}][${j}-1] + @{A}[${i}][${j}] + @{A}[${i}][${j}+1]
                   + @{A}[${i}+1][${j}-1] + @{A}[${i}+1][${j}] + @{A}[${i}+1][${j}+1])/SCALAR_VAL(9.0);
  domain [tsteps, n] -> { S0[t, i, j] : t >= 0 and t <= tsteps - 1 and i >= 1 and i <= n - 2 and j >= 1 and j <= n - 2 }
  schedule [tsteps, n] -> { S0[t, i, j] -> [0, t, 0, i, 0, j, 0] }
  write [tsteps, n] -> { S0[t, i, j] -> A[i, j] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i - 1, j - 1] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i - 1, j] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i - 1, j + 1] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i, j - 1] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i, j] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i, j + 1] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i + 1, j - 1] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i + 1, j] }
  read [tsteps, n] -> { S0[t, i, j] -> A[i + 1, j + 1] }
",
    );
}

#[test]
fn two_mm_with_variable_length_arrays() {
    check(
        "2mm.c",
        "static void kernel_2mm",
        "scop in kernel_2mm at 15:1 region REGION insert_at INSERT
param ni: int local
param nj: int local
param nk: int local
param nl: int local
context [ni, nj, nk, nl] -> { : }
array A0 tmp: double rank 2 local written
array A1 alpha: double rank 0 local
array A2 A: double rank 2 local
array A3 B: double rank 2 local
array A4 D: double rank 2 local written
array A5 beta: double rank 0 local
array A6 C: double rank 2 local
S0 at 20:9: @{tmp}[${i}][${j}] = SCALAR_VAL(0.0);
  domain [ni, nj, nk, nl] -> { S0[i, j] : i >= 0 and i <= ni - 1 and j >= 0 and j <= nj - 1 }
  schedule [ni, nj, nk, nl] -> { S0[i, j] -> [0, i, 0, j, 0, 0, 0] }
  write [ni, nj, nk, nl] -> { S0[i, j] -> tmp[i, j] }
S1 at 22:11: @{tmp}[${i}][${j}] += @{alpha} * @{A}[${i}][${k}] * @{B}[${k}][${j}];
  domain [ni, nj, nk, nl] -> { S1[i, j, k] : i >= 0 and i <= ni - 1 and j >= 0 and j <= nj - 1 and k >= 0 and k <= nk - 1 }
  schedule [ni, nj, nk, nl] -> { S1[i, j, k] -> [0, i, 0, j, 1, k, 0] }
  read [ni, nj, nk, nl] -> { S1[i, j, k] -> tmp[i, j] }
  write [ni, nj, nk, nl] -> { S1[i, j, k] -> tmp[i, j] }
  read [ni, nj, nk, nl] -> { S1[i, j, k] -> alpha[] }
  read [ni, nj, nk, nl] -> { S1[i, j, k] -> A[i, k] }
  read [ni, nj, nk, nl] -> { S1[i, j, k] -> B[k, j] }
S2 at 27:9: @{D}[${i}][${j}] *= @{beta};
  domain [ni, nj, nk, nl] -> { S2[i, j] : i >= 0 and i <= ni - 1 and j >= 0 and j <= nl - 1 }
  schedule [ni, nj, nk, nl] -> { S2[i, j] -> [1, i, 0, j, 0, 0, 0] }
  read [ni, nj, nk, nl] -> { S2[i, j] -> D[i, j] }
  write [ni, nj, nk, nl] -> { S2[i, j] -> D[i, j] }
  read [ni, nj, nk, nl] -> { S2[i, j] -> beta[] }
S3 at 29:11: @{D}[${i}][${j}] += @{tmp}[${i}][${k}] * @{C}[${k}][${j}];
  domain [ni, nj, nk, nl] -> { S3[i, j, k] : i >= 0 and i <= ni - 1 and j >= 0 and j <= nl - 1 and k >= 0 and k <= nj - 1 }
  schedule [ni, nj, nk, nl] -> { S3[i, j, k] -> [1, i, 0, j, 1, k, 0] }
  read [ni, nj, nk, nl] -> { S3[i, j, k] -> D[i, j] }
  write [ni, nj, nk, nl] -> { S3[i, j, k] -> D[i, j] }
  read [ni, nj, nk, nl] -> { S3[i, j, k] -> tmp[i, k] }
  read [ni, nj, nk, nl] -> { S3[i, j, k] -> C[k, j] }
",
    );
}
