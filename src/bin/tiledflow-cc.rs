//! `tiledflow-cc`: use as `CC=tiledflow-cc make`. See `tiledflow::cc` for what it does.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use tiledflow::{cc, Error, Options};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|a| a == "--tiledflow-help") {
        println!(
            "tiledflow-cc: a C compiler driver that runs tiledflow on each C source, then the real compiler\n\
             (TILEDFLOW_CC, default cc), and links the streamrt runtime.\n\n\
             Options of its own: --tiledflow-strict (or TILEDFLOW_STRICT=1): fail when a source cannot be\n\
             transformed; --tiledflow-target=tasks|seq|omp; --tiledflow-tile-sizes=N[,N...]; --tiledflow-no-tile.\n\
             TILEDFLOW_FUSE=min|smart|max chooses the scheduler's fusion heuristic (default smart).\n\
             Every other argument goes to the compiler unchanged."
        );
        return ExitCode::SUCCESS;
    }
    match run(&argv) {
        Ok(code) => code,
        Err(m) => {
            eprintln!("tiledflow-cc: error: {m}");
            ExitCode::from(1)
        }
    }
}

fn run(argv: &[String]) -> Result<ExitCode, String> {
    let mut cmd = cc::parse(argv)?;
    cmd.strict |= std::env::var("TILEDFLOW_STRICT").is_ok_and(|v| v == "1");
    let tmp = tempfile::Builder::new().prefix("tiledflow-cc.").tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let mut opts = Options { clang_args: cmd.parser_flags.clone(), line_directives: true, strict: cmd.strict, ..Options::default() };
    match cmd.target.as_deref() {
        None | Some("tasks") => opts.target = taskgen::Target::Tasks,
        Some("seq") => opts.target = taskgen::Target::Seq,
        Some("omp") => opts.target = taskgen::Target::Omp,
        Some(t) => return Err(format!("--tiledflow-target={t}: expected tasks, seq or omp")),
    }
    if cmd.no_tile {
        opts.schedule.tile_sizes = None;
    } else if let Some(ts) = &cmd.tile_sizes {
        let sizes: Result<Vec<i64>, _> = ts.split(',').map(|x| x.trim().parse::<i64>()).collect();
        match sizes {
            Ok(s) if !s.is_empty() && s.iter().all(|&x| x >= 1) => opts.schedule.tile_sizes = Some(s),
            _ => return Err(format!("--tiledflow-tile-sizes={ts}: expected positive integers separated by commas")),
        }
    }
    match std::env::var("TILEDFLOW_FUSE").as_deref() {
        Err(_) | Ok("smart") => opts.schedule.fuse = polyhedral::Fuse::Smart,
        Ok("min") => opts.schedule.fuse = polyhedral::Fuse::Min,
        Ok("max") => opts.schedule.fuse = polyhedral::Fuse::Max,
        Ok(f) => return Err(format!("TILEDFLOW_FUSE={f}: expected min, smart or max")),
    }
    let mut args = cmd.args.clone();
    let mut quote_dirs = Vec::new();
    for (n, &idx) in cmd.sources.iter().enumerate() {
        let src = PathBuf::from(&args[idx]);
        match tiledflow::compile_file(&src, &opts) {
            Ok(out) => {
                for d in out.diagnostics.iter().filter(|d| !d.contains(": note: ")) {
                    eprintln!("{d}");
                }
                // Same file name in a private directory: `cc -c` names the object after it.
                let dir = tmp.path().join(n.to_string());
                std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
                let dst = dir.join(src.file_name().unwrap_or("source.c".as_ref()));
                std::fs::write(&dst, out.text).map_err(|e| format!("{}: {e}", dst.display()))?;
                let parent = src.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                args[idx] = dst.display().to_string();
                // Quoted includes are looked up next to the including file first: keep that.
                quote_dirs.push("-iquote".to_string());
                quote_dirs.push(parent.display().to_string());
            }
            Err(e @ Error::User(_)) | Err(e @ Error::Internal(_)) => {
                if cmd.strict {
                    return Err(format!("{}: {e}", src.display()));
                }
                eprintln!("tiledflow-cc: warning: {}: compiled without tiledflow: {e}", src.display());
            }
        }
    }
    args.splice(0..0, quote_dirs);
    if opts.target == taskgen::Target::Omp {
        // The parallel loops' pragmas when compiling, libgomp when linking.
        args.push("-fopenmp".to_string());
    }
    if cmd.links {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let rt = cc::find_runtime(&exe)?;
        args.push(rt.display().to_string());
        args.extend(["-lpthread", "-ldl", "-lm"].map(String::from));
    }
    let compiler = std::env::var("TILEDFLOW_CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&compiler).args(&args).status().map_err(|e| format!("cannot run {compiler}: {e}"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
        None => ExitCode::from(1),
    })
}
