//! PolyBench regression runner.
fn main() {
    eprintln!("polybench: the regression runner is not built yet (see issue 8)");
    std::process::exit(2);
}
