//! The kernels compute what they claim: an oracle independent of the differential tests, which
//! only compare a kernel with itself. Each test runs one kernel at a small odd size, reads its
//! dump, and checks a mathematical identity on the result (L·Lᵀ = A for cholesky, A·x = b for
//! ludcmp, ...) or compares it with a computation written differently (shortest paths by
//! relaxation to a fixed point, Nussinov by memoized recursion).
//!
//! The inputs are rebuilt here from the formulas of each kernel's `init_array`; a change there
//! must be mirrored here.

// Index loops read like the matrix identities they check, and `%` like the C formulas it mirrors
// (`is_multiple_of` is also newer than the workspace's rust-version).
#![allow(clippy::needless_range_loop, clippy::manual_is_multiple_of)]

use testsuite::{run_original, DumpedArray};

/// Runs `kernel` with `defines` and returns its dump.
fn dump(kernel: &str, defines: &[(&str, &str)]) -> Vec<DumpedArray> {
    run_original(kernel, defines).unwrap_or_else(|e| panic!("{kernel}: {e:#}"))
}

/// The values of array `name` as f64, checked to number `len`.
fn values(arrays: &[DumpedArray], name: &str, len: usize) -> Vec<f64> {
    let array = arrays
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no array {name}"));
    assert_eq!(array.values.len(), len, "array {name}");
    array
        .values
        .iter()
        .map(|v| {
            v.parse::<f64>()
                .unwrap_or_else(|e| panic!("{name}: {v}: {e}"))
        })
        .collect()
}

/// Row-major matrix from a flat vector.
fn matrix(flat: &[f64], rows: usize, cols: usize) -> Vec<Vec<f64>> {
    assert_eq!(flat.len(), rows * cols);
    flat.chunks(cols).map(<[f64]>::to_vec).collect()
}

fn assert_close(what: &str, actual: f64, expected: f64, tol: f64) {
    let scale = 1f64.max(actual.abs()).max(expected.abs());
    assert!(
        (actual - expected).abs() <= tol * scale,
        "{what}: got {actual}, expected {expected} (tolerance {tol})"
    );
}

fn size(n: usize) -> String {
    n.to_string()
}

#[test]
fn cholesky_factor_times_its_transpose_is_the_input() {
    let n = 17;
    let nf = n as f64;
    let input = |i: usize, j: usize| {
        if i == j {
            2.0
        } else {
            ((i + j) % 7 + 1) as f64 / (8.0 * nf)
        }
    };
    let a = matrix(
        &values(&dump("cholesky", &[("N", &size(n))]), "A", n * n),
        n,
        n,
    );
    for i in 0..n {
        for j in 0..n {
            if j > i {
                assert_eq!(
                    a[i][j],
                    input(i, j),
                    "upper triangle A[{i}][{j}] must be untouched"
                );
                continue;
            }
            let llt: f64 = (0..=j).map(|k| a[i][k] * a[j][k]).sum();
            assert_close(&format!("(L*L^T)[{i}][{j}]"), llt, input(i, j), 1e-12);
        }
    }
}

#[test]
fn lu_factors_multiply_back_to_the_input() {
    let n = 17;
    let nf = n as f64;
    let input = |i: usize, j: usize| {
        if i == j {
            2.0
        } else {
            ((3 * i + 5 * j) % 8 + 1) as f64 / (8.0 * nf)
        }
    };
    let a = matrix(&values(&dump("lu", &[("N", &size(n))]), "A", n * n), n, n);
    let l = |i: usize, k: usize| {
        if k < i {
            a[i][k]
        } else if k == i {
            1.0
        } else {
            0.0
        }
    };
    let u = |k: usize, j: usize| if k <= j { a[k][j] } else { 0.0 };
    for i in 0..n {
        for j in 0..n {
            let lu: f64 = (0..n).map(|k| l(i, k) * u(k, j)).sum();
            assert_close(&format!("(L*U)[{i}][{j}]"), lu, input(i, j), 1e-12);
        }
    }
}

#[test]
fn ludcmp_solves_its_system() {
    let n = 19;
    let nf = n as f64;
    let input = |i: usize, j: usize| {
        if i == j {
            2.0
        } else {
            ((5 * i + 3 * j) % 8 + 1) as f64 / (8.0 * nf)
        }
    };
    let x = values(&dump("ludcmp", &[("N", &size(n))]), "x", n);
    for i in 0..n {
        let ax: f64 = (0..n).map(|j| input(i, j) * x[j]).sum();
        assert_close(
            &format!("(A*x)[{i}]"),
            ax,
            1.0 + (i % 6) as f64 / 6.0,
            1e-12,
        );
    }
}

#[test]
fn trisolv_solves_its_system() {
    let n = 19;
    let nf = n as f64;
    let l = |i: usize, j: usize| match j.cmp(&i) {
        std::cmp::Ordering::Equal => 2.0,
        std::cmp::Ordering::Less => ((i + 2 * j) % 5 + 1) as f64 / (5.0 * nf),
        std::cmp::Ordering::Greater => 0.0,
    };
    let x = values(&dump("trisolv", &[("N", &size(n))]), "x", n);
    for i in 0..n {
        let lx: f64 = (0..n).map(|j| l(i, j) * x[j]).sum();
        assert_close(
            &format!("(L*x)[{i}]"),
            lx,
            1.0 + (i % 7) as f64 / 7.0,
            1e-12,
        );
    }
}

#[test]
fn durbin_solves_its_toeplitz_system() {
    let n = 23;
    let r: Vec<f64> = (0..n).map(|k| 1.0 / (k + 2) as f64).collect();
    // T[i][j] = c[|i - j|] with c = (1, r[0], r[1], ...); the kernel solves T y = -r.
    let c = |d: usize| if d == 0 { 1.0 } else { r[d - 1] };
    let y = values(&dump("durbin", &[("N", &size(n))]), "y", n);
    for i in 0..n {
        let ty: f64 = (0..n).map(|j| c(i.abs_diff(j)) * y[j]).sum();
        assert_close(&format!("(T*y)[{i}]"), ty, -r[i], 1e-10);
    }
}

#[test]
fn gramschmidt_gives_orthonormal_q_and_upper_triangular_r() {
    let (m, n) = (15, 11);
    let input =
        |i: usize, j: usize| ((i * (j + 1)) % 7) as f64 / 7.0 + if i == j { n as f64 } else { 0.0 };
    let arrays = dump("gramschmidt", &[("M", &size(m)), ("N", &size(n))]);
    let q = matrix(&values(&arrays, "Q", m * n), m, n);
    let r = matrix(&values(&arrays, "R", n * n), n, n);
    for i in 0..n {
        for j in 0..i {
            assert_eq!(r[i][j], 0.0, "R[{i}][{j}] below the diagonal");
        }
        for j in 0..n {
            let qtq: f64 = (0..m).map(|k| q[k][i] * q[k][j]).sum();
            assert_close(
                &format!("(Q^T*Q)[{i}][{j}]"),
                qtq,
                if i == j { 1.0 } else { 0.0 },
                1e-12,
            );
        }
    }
    for i in 0..m {
        for j in 0..n {
            let qr: f64 = (0..n).map(|k| q[i][k] * r[k][j]).sum();
            assert_close(&format!("(Q*R)[{i}][{j}]"), qr, input(i, j), 1e-12);
        }
    }
}

#[test]
fn floyd_warshall_matches_relaxation_to_a_fixed_point() {
    let n = 23;
    let weight = |i: usize, j: usize| -> i64 {
        if i == j {
            0
        } else if (3 * i + 5 * j) % 11 == 0 || (i + 2 * j) % 7 == 0 {
            999
        } else {
            ((i * j + i + 2 * j) % 7 + 1) as i64
        }
    };
    let mut dist: Vec<Vec<i64>> = (0..n)
        .map(|i| (0..n).map(|j| weight(i, j)).collect())
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    if dist[i][k] + weight(k, j) < dist[i][j] {
                        dist[i][j] = dist[i][k] + weight(k, j);
                        changed = true;
                    }
                }
            }
        }
    }
    let path = values(&dump("floyd-warshall", &[("N", &size(n))]), "path", n * n);
    for i in 0..n {
        for j in 0..n {
            assert_eq!(path[i * n + j], dist[i][j] as f64, "path[{i}][{j}]");
        }
    }
}

#[test]
fn nussinov_matches_a_memoized_recursion() {
    let n = 29;
    let seq: Vec<u32> = (0..n).map(|i| ((7 * i + i / 3 + 1) % 4) as u32).collect();
    // best[i][j]: most non-crossing pairs within seq[i..=j]; pairs need a base between them.
    let mut best = vec![vec![0u32; n]; n];
    for len in 1..n {
        for i in 0..n - len {
            let j = i + len;
            let mut v = best[i + 1][j].max(best[i][j - 1]);
            if len >= 2 && seq[i] + seq[j] == 3 {
                v = v.max(best[i + 1][j - 1] + 1);
            }
            for k in i + 1..j {
                v = v.max(best[i][k] + best[k + 1][j]);
            }
            best[i][j] = v;
        }
    }
    let table = values(&dump("nussinov", &[("N", &size(n))]), "table", n * n);
    for i in 0..n {
        for j in i + 1..n {
            assert_eq!(table[i * n + j], f64::from(best[i][j]), "table[{i}][{j}]");
        }
    }
}
