//! Prints the random affine program of each seed given: `cargo run -p testsuite --example
//! random_program -- SEED...` (see `testsuite::random_program`).

fn main() {
    for arg in std::env::args().skip(1) {
        match arg.parse::<u64>() {
            Ok(seed) => print!("{}", testsuite::random_program::generate(seed)),
            Err(e) => {
                eprintln!("random_program: {arg}: not a seed: {e}");
                std::process::exit(1);
            }
        }
    }
}
