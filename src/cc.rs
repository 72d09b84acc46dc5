//! `tiledflow-cc`: a drop-in C compiler driver.
//!
//! It reads a cc command line, runs tiledflow on each C source into a private temporary
//! directory, and runs the real compiler (`TILEDFLOW_CC`, default `cc`) on the transformed
//! sources with every other argument unchanged; when the command links, it adds the streamrt
//! library. A source tiledflow cannot handle is compiled untouched with one warning, unless
//! `--tiledflow-strict` (or `TILEDFLOW_STRICT=1`) makes that an error.
//!
//! Options that start with `--tiledflow-` are tiledflow's and never reach the compiler:
//! `--tiledflow-strict`, `--tiledflow-target=tasks|seq`, `--tiledflow-tile-sizes=32,16`,
//! `--tiledflow-no-tile`, `--tiledflow-scop=auto|pragma`.

use std::path::{Path, PathBuf};

/// A cc command line, classified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CcCommand {
    /// All arguments for the real compiler, in order; `sources` index into it.
    pub args: Vec<String>,
    /// Positions in `args` of the C source files tiledflow transforms.
    pub sources: Vec<usize>,
    /// Flags the parser needs too (-I, -D, -U, -std=, -include, -isystem).
    pub parser_flags: Vec<String>,
    /// Whether the command links (no -c, -S, -E, or dependency-only -M/-MM).
    pub links: bool,
    pub strict: bool,
    pub target: Option<String>,
    pub tile_sizes: Option<String>,
    pub no_tile: bool,
    /// `--tiledflow-scop=auto|pragma`.
    pub scop: Option<String>,
}

/// Options of cc that take their value in the next argument.
const TAKES_VALUE: &[&str] = &[
    "-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-x", "-MF", "-MT", "-MQ",
    "-L", "-l", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-z",
];

/// Classifies a cc command line (without argv[0]).
pub fn parse(argv: &[String]) -> Result<CcCommand, String> {
    let mut cmd = CcCommand { links: true, ..CcCommand::default() };
    let mut language_c = true; // `-x LANG` changes how later sources are read
    let mut k = 0;
    while k < argv.len() {
        let a = &argv[k];
        if let Some(opt) = a.strip_prefix("--tiledflow-") {
            match opt.split_once('=') {
                None if opt == "strict" => cmd.strict = true,
                None if opt == "no-tile" => cmd.no_tile = true,
                Some(("target", v)) => cmd.target = Some(v.to_string()),
                Some(("tile-sizes", v)) => cmd.tile_sizes = Some(v.to_string()),
                Some(("scop", v)) => cmd.scop = Some(v.to_string()),
                _ => return Err(format!("unknown option {a} (tiledflow options: --tiledflow-strict, --tiledflow-no-tile, --tiledflow-target=tasks|seq, --tiledflow-tile-sizes=N,..., --tiledflow-scop=auto|pragma)")),
            }
            k += 1;
            continue;
        }
        if TAKES_VALUE.contains(&a.as_str()) {
            let v = argv.get(k + 1).ok_or_else(|| format!("missing argument after {a}"))?;
            if matches!(a.as_str(), "-I" | "-D" | "-U" | "-include" | "-isystem") {
                cmd.parser_flags.push(a.clone());
                cmd.parser_flags.push(v.clone());
            }
            if a == "-x" {
                language_c = v == "c";
            }
            cmd.args.push(a.clone());
            cmd.args.push(v.clone());
            k += 2;
            continue;
        }
        match a.as_str() {
            "-c" | "-S" | "-E" | "-M" | "-MM" => cmd.links = false,
            _ => {}
        }
        if a.starts_with("-std=") || (a.len() > 2 && (a.starts_with("-I") || a.starts_with("-D") || a.starts_with("-U"))) {
            cmd.parser_flags.push(a.clone());
        } else if let Some(lang) = a.strip_prefix("-x") {
            language_c = lang == "c";
        }
        let is_source = !a.starts_with('-') && (language_c && a.ends_with(".c"));
        if is_source {
            cmd.sources.push(cmd.args.len());
        }
        cmd.args.push(a.clone());
        k += 1;
    }
    Ok(cmd)
}

/// The streamrt library for linking: `TILEDFLOW_RUNTIME` if set, else `libstreamrt.a` next to the
/// driver (the build tree) or in `../lib` (an installation).
pub fn find_runtime(exe: &Path) -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("TILEDFLOW_RUNTIME") {
        return Ok(PathBuf::from(p));
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    for cand in [dir.join("libstreamrt.a"), dir.join("../lib/libstreamrt.a")] {
        if cand.is_file() {
            return Ok(cand);
        }
    }
    Err(format!(
        "cannot find libstreamrt.a next to {} or in ../lib (build it with `cargo build -p streamrt`, or set TILEDFLOW_RUNTIME)",
        exe.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn sources_flags_and_linking_are_classified() {
        let c = parse(&v("-O2 -I inc -DN=10 -std=c99 a.c -o prog b.o -lm --tiledflow-strict")).unwrap();
        assert_eq!(c.args, v("-O2 -I inc -DN=10 -std=c99 a.c -o prog b.o -lm"));
        // -O2, -I, inc, -DN=10, -std=c99, then a.c
        assert_eq!(c.sources, vec![5]);
        assert_eq!(c.parser_flags, v("-I inc -DN=10 -std=c99"));
        assert!(c.links);
        assert!(c.strict);
    }

    #[test]
    fn compile_only_does_not_link_and_output_is_not_a_source() {
        let c = parse(&v("-c x.c -o x.c.o")).unwrap();
        assert!(!c.links);
        assert_eq!(c.sources, vec![1]);
        let c = parse(&v("-c -o out.c y.c")).unwrap();
        assert_eq!(c.sources, vec![3]);
    }

    #[test]
    fn non_c_languages_are_not_transformed() {
        let c = parse(&v("-x c++ a.c -x c b.c")).unwrap();
        assert_eq!(c.sources, vec![5]);
    }

    #[test]
    fn tiledflow_options_are_ours_and_unknown_ones_are_errors() {
        let c = parse(&v("--tiledflow-target=seq --tiledflow-tile-sizes=8,16 a.c")).unwrap();
        assert_eq!(c.target.as_deref(), Some("seq"));
        assert_eq!(c.tile_sizes.as_deref(), Some("8,16"));
        assert_eq!(c.args, v("a.c"));
        assert!(parse(&v("--tiledflow-bogus a.c")).unwrap_err().contains("unknown option"));
        assert!(parse(&v("a.c -o")).unwrap_err().contains("missing argument"));
    }
}
