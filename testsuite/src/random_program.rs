//! Random affine programs: a generator of C programs made of one `#pragma scop` region, for
//! differential tests of the whole pipeline on code that nobody wrote for it.
//!
//! A program is a function of its seed ([`generate`]): 2 to 4 arrays of rank 1 to 3, two
//! scalars, and 1 to 4 loop nests of depth 1 to 3, some under a time loop. Bounds are
//! rectangular, triangular or offset, with `MIN`/`MAX`; statements sit at any depth, guarded by
//! `%` or comparisons of iterators; they assign, accumulate (`+=`, scalar reductions), and use
//! block-scoped temporaries, chained assignments and increments. Subscripts are iterators plus
//! constants, reversed, strided or constant, always inside the arrays (every dimension has
//! `2 * NMAX + 16` elements and every iterator stays in `0 ..= N + 2`, where the size `N`, a
//! parameter of the SCoP, is at most `NMAX`). Values are sums of
//! products by small powers of two, so every compiler computes them alike when contractions
//! are off (`-ffp-contract=off`).
//!
//! `main` fills the arrays, runs the SCoP once for the size given as its argument and prints one
//! 64-bit FNV-1a hash of the bytes of each array and each scalar's value (`%a`): equal outputs
//! mean equal results, bit for bit.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::fmt::Write;

/// The C text of the program of `seed`.
pub fn generate(seed: u64) -> String {
    let mut g = Gen {
        rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        arrays: Vec::new(),
        temps: 0,
    };
    g.program(seed)
}

struct Gen {
    rng: Xoshiro256PlusPlus,
    /// Name and rank of each array.
    arrays: Vec<(char, usize)>,
    /// Block-scoped temporaries declared so far (each gets a name of its own).
    temps: usize,
}

/// Constants the statements multiply by: exact in binary.
const FACTORS: &[&str] = &["0.5", "0.25", "1.5", "0.125", "2.0", "0.75"];

const SCALARS: &[&str] = &["s0", "s1"];

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn program(&mut self, seed: u64) -> String {
        let n_arrays = 2 + self.below(3);
        for k in 0..n_arrays {
            let rank = 1 + self.below(3);
            self.arrays.push((char::from(b'A' + k as u8), rank));
        }
        let mut body = String::new();
        let n_nests = 1 + self.below(3);
        for _ in 0..n_nests {
            let time = self.chance(0.25);
            let pad = if time { "    " } else { "  " };
            let nest = self.nest(&[], pad);
            if time {
                let steps = 2 + self.below(3);
                let _ = write!(body, "  for (int t = 0; t < {steps}; t++) {{\n{nest}  }}\n");
            } else {
                body.push_str(&nest);
            }
        }
        let mut c = String::new();
        let _ = writeln!(
            c,
            "/* Random affine program, seed {seed} (testsuite::random_program). */"
        );
        c.push_str("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
        c.push_str("/* The largest size; the size of a run is its argument (default NMAX). */\n#define NMAX 19\n#define S (2 * NMAX + 16)\n");
        c.push_str("#define MIN(a, b) ((a) < (b) ? (a) : (b))\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n\n");
        for &(name, rank) in &self.arrays {
            let _ = writeln!(c, "static double {name}{};", "[S]".repeat(rank));
        }
        let _ = writeln!(
            c,
            "static double {} = 0.5, {} = 1.0;\n",
            SCALARS[0], SCALARS[1]
        );
        c.push_str("static void kernel(int N)\n{\n#pragma scop\n");
        c.push_str(&body);
        c.push_str("#pragma endscop\n}\n\n");
        c.push_str(
            "static unsigned long long fnv(const void *p, size_t n)\n{\n  const unsigned char *b = p;\n  unsigned long long h = 1469598103934665603ULL;\n  for (size_t k = 0; k < n; k++)\n    h = (h ^ b[k]) * 1099511628211ULL;\n  return h;\n}\n\n",
        );
        c.push_str("int main(int argc, char **argv)\n{\n  int n = argc > 1 ? atoi(argv[1]) : NMAX;\n  if (n < 0 || n > NMAX)\n    return 2;\n");
        for &(name, _) in &self.arrays {
            let _ = writeln!(
                c,
                "  {{ double *p = (double *)&{name}; for (size_t k = 0; k < sizeof({name}) / sizeof(double); k++) p[k] = (double)((k * {m} + {a}) % 17) / 8.0; }}",
                m = 3 + 2 * (name as u32 - 'A' as u32),
                a = name as u32 % 5,
            );
        }
        c.push_str("  kernel(n);\n");
        for &(name, _) in &self.arrays {
            let _ = writeln!(
                c,
                "  printf(\"{name} %016llx\\n\", fnv(&{name}, sizeof({name})));"
            );
        }
        for s in SCALARS {
            let _ = writeln!(c, "  printf(\"{s} %a\\n\", {s});");
        }
        c.push_str("  return 0;\n}\n");
        c
    }

    /// A loop nest under the iterators `outer`, indented by `pad`.
    fn nest(&mut self, outer: &[String], pad: &str) -> String {
        let depth = outer.len();
        let it = format!("i{depth}");
        let (lo, hi) = self.bounds(outer);
        let mut s = String::new();
        let _ = writeln!(s, "{pad}for (int {it} = {lo}; {it} < {hi}; {it}++) {{");
        let mut iters = outer.to_vec();
        iters.push(it);
        let inner_pad = format!("{pad}  ");
        let deeper = depth < 2 && (depth == 0 || self.chance(0.6));
        if !deeper || self.chance(0.3) {
            s.push_str(&self.statements(&iters, &inner_pad));
        }
        if deeper {
            s.push_str(&self.nest(&iters, &inner_pad));
            if self.chance(0.2) {
                s.push_str(&self.statements(&iters, &inner_pad));
            }
        }
        let _ = writeln!(s, "{pad}}}");
        s
    }

    /// Lower and upper (exclusive) bounds of a loop under `outer`; the iterator stays in
    /// `0 ..= N + 2`.
    fn bounds(&mut self, outer: &[String]) -> (String, String) {
        let Some(o) = outer.last().cloned().filter(|_| self.chance(0.6)) else {
            let lo = self.pick(&["0", "1", "2"]).to_string();
            let hi = self.pick(&["N", "N - 1", "N + 2"]).to_string();
            return (lo, hi);
        };
        match self.below(5) {
            0 => ("0".into(), format!("{o} + 1")),
            1 => (o.clone(), "N".into()),
            2 => (format!("{o} + 1"), "N".into()),
            3 => (format!("MAX(0, {o} - 2)"), format!("MIN(N, {o} + 3)")),
            _ => ("0".into(), format!("MIN({o}, N - 2) + 1")),
        }
    }

    /// One to three statements at the iterators `iters`, some guarded.
    fn statements(&mut self, iters: &[String], pad: &str) -> String {
        let mut s = String::new();
        for _ in 0..1 + self.below(2) {
            let stmt = self.statement(iters, pad);
            if self.chance(0.2) {
                let guard = self.guard(iters);
                let _ = write!(s, "{pad}if ({guard})\n{}", indent(&stmt));
            } else {
                s.push_str(&stmt);
            }
        }
        s
    }

    /// A condition on the iterators: of two different ones where there are two.
    fn guard(&mut self, iters: &[String]) -> String {
        let k = self.below(iters.len());
        let a = iters[k].clone();
        let b = iters[(k + 1 + self.below(iters.len().max(2) - 1)) % iters.len()].clone();
        match (self.below(3), a == b) {
            (0, false) => format!("({a} + {b}) % 3 == {}", self.below(3)),
            (0, true) => format!("{a} % 3 == {}", self.below(3)),
            (1, false) => format!("{a} > {b} + 1"),
            _ => format!("{a} <= N / 2"),
        }
    }

    /// One statement (with its newline) at the iterators `iters`.
    fn statement(&mut self, iters: &[String], pad: &str) -> String {
        match self.below(10) {
            0 => {
                let s = self.pick(SCALARS);
                let e = self.expr(iters);
                format!("{pad}{s} += {e};\n")
            }
            1 => {
                let name = format!("tmp{}", self.temps);
                self.temps += 1;
                let e = self.expr(iters);
                let w = self.write_target(iters);
                let f = self.pick(FACTORS);
                format!("{pad}{{\n{pad}  double {name} = {e};\n{pad}  {w} = {name} * {f} + {name};\n{pad}}}\n")
            }
            2 => {
                let w1 = self.write_target(iters);
                let w2 = self.write_target(iters);
                let e = self.expr(iters);
                if w1 == w2 {
                    format!("{pad}{w1} = {e};\n")
                } else {
                    format!("{pad}{w1} = {w2} = {e};\n")
                }
            }
            3 => {
                let w = self.write_target(iters);
                format!("{pad}{w}++;\n")
            }
            4 | 5 => {
                let w = self.write_target(iters);
                let e = self.expr(iters);
                format!("{pad}{w} += {e};\n")
            }
            _ => {
                let w = self.write_target(iters);
                let e = self.expr(iters);
                format!("{pad}{w} = {e};\n")
            }
        }
    }

    /// An array element to write.
    fn write_target(&mut self, iters: &[String]) -> String {
        let k = self.below(self.arrays.len());
        self.element(k, iters)
    }

    /// A sum of one to three products of reads by constants.
    fn expr(&mut self, iters: &[String]) -> String {
        let terms: Vec<String> = (0..1 + self.below(3))
            .map(|_| {
                let f = self.pick(FACTORS);
                let r = match self.below(6) {
                    0 => self.pick(SCALARS).to_string(),
                    1 => format!("(double){}", iters[self.below(iters.len())]),
                    _ => {
                        let k = self.below(self.arrays.len());
                        self.element(k, iters)
                    }
                };
                format!("{f} * {r}")
            })
            .collect();
        terms.join(" + ")
    }

    /// An element of array `k`: one subscript per dimension.
    fn element(&mut self, k: usize, iters: &[String]) -> String {
        let (name, rank) = self.arrays[k];
        let mut e = name.to_string();
        for _ in 0..rank {
            let it = iters[self.below(iters.len())].clone();
            let c = 3 + self.below(4);
            let sub = match self.below(8) {
                0 => format!("{c}"),
                1 => format!("N - 1 - {it} + {c}"),
                2 => format!("2 * {it} + {c}"),
                _ => format!("{it} + {c}"),
            };
            let _ = write!(e, "[{sub}]");
        }
        e
    }
}

/// `text` with every line indented by two more spaces.
fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_program_and_seeds_differ() {
        assert_eq!(generate(7), generate(7));
        assert_ne!(generate(7), generate(8));
        let p = generate(7);
        assert!(
            p.contains("#pragma scop") && p.contains("#pragma endscop"),
            "{p}"
        );
    }
}
