//! `tiledflow-cc`: use as `CC=tiledflow-cc make`. See `tiledflow::cc` for what it does.
//!
//! It writes nothing but the outputs the command asks for (and `--tiledflow-keep` copies): its
//! transformed sources live in a private temporary directory removed at exit, so that any number
//! of it can run at once (`make -j`). Exit status: the real compiler's; 1 when tiledflow-cc
//! itself fails (bad option, strict mode, no runtime to link).
//!
//! It never breaks a build that `cc` would make: a source tiledflow cannot transform is compiled
//! as written with one warning, and when the compiler rejects the transformed sources (a
//! tiledflow bug), the command is run again on the user's sources as written, with one warning
//! naming the compiler's first error (under strict: an error showing its messages). The
//! compiler's messages about transformed sources are held until it has succeeded on them.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use tiledflow::cc::{self, CcCommand};
use tiledflow::cc_cuda;
use tiledflow::{Error, Options};

/// Set in the real compiler's environment: a `TILEDFLOW_CC` that leads back to tiledflow-cc
/// would otherwise call itself forever.
const NESTED: &str = "TILEDFLOW_CC_NESTED";

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match run(&argv) {
        Ok(code) => code,
        Err(m) => {
            eprintln!("tiledflow-cc: error: {m}");
            ExitCode::from(1)
        }
    }
}

/// A transformed source and where it goes.
struct Transformed {
    /// Position of the source in the compiler's arguments.
    arg: usize,
    /// The transformed text.
    text: String,
    /// With `--tiledflow-target=cuda`: the kernel file, when it has kernels.
    cuda: Option<String>,
}

fn run(argv: &[String]) -> Result<ExitCode, String> {
    if std::env::var_os(NESTED).is_some() {
        return Err(
            "TILEDFLOW_CC leads back to tiledflow-cc; set it to the real C compiler (e.g. cc)"
                .into(),
        );
    }
    let mut cmd = cc::parse(&cc::expand_response_files(argv))?;
    if cmd.ours.help {
        println!(
            "tiledflow-cc: a C compiler driver. It runs tiledflow on each C source, then the real compiler\n\
             (TILEDFLOW_CC, default cc) with every other argument, and links the streamrt runtime when it links\n\
             (libstreamrt.a; libstreamrt_gpu.a for --tiledflow-target=cuda).\n\
             Example: make CC=tiledflow-cc CFLAGS=-O2\n\n{}",
            cc::help_text()
        );
        return Ok(ExitCode::SUCCESS);
    }
    cmd.ours.strict |= std::env::var("TILEDFLOW_STRICT").is_ok_and(|v| v == "1");
    cmd.ours.replace_pragmas |= std::env::var("TILEDFLOW_REPLACE_PRAGMAS").is_ok_and(|v| v == "1");
    if cmd.ours.report.is_none() {
        cmd.ours.report = std::env::var_os("TILEDFLOW_REPORT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
    }
    let opts = pipeline_options(&cmd)?;
    let mut report = Vec::new();
    let mut stdin_text: Option<Vec<u8>> = None;
    let mut transformed = Vec::new();
    for &arg in &cmd.sources {
        let name = cmd.args[arg].clone();
        let result = if name == "-" {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| format!("reading standard input: {e}"))?;
            let r = match std::str::from_utf8(&bytes) {
                Ok(text) => tiledflow::compile_source("<stdin>", text, &opts),
                Err(e) => Err(Error::User(format!("<stdin>: not UTF-8: {e}"))),
            };
            stdin_text = Some(bytes);
            r
        } else if !Path::new(&name).exists() {
            continue; // the compiler says so, as it would without tiledflow
        } else {
            tiledflow::compile_file(Path::new(&name), &opts)
        };
        let shown = if name == "-" {
            "<stdin>"
        } else {
            name.as_str()
        };
        match result {
            Ok(out) => {
                // Notes (why a nest or SCoP is left as it is) only under --tiledflow-verbose.
                let shown_notes = cmd.ours.verbose;
                for d in out
                    .diagnostics
                    .iter()
                    .filter(|d| shown_notes || d.severity != tiledflow::diagnostic::Severity::Note)
                {
                    eprintln!("{d}");
                }
                report.push(serde_json::json!({
                    "source": shown,
                    "scops": out.reports.len()
                        + out
                            .diagnostics
                            .iter()
                            .filter(|d| matches!(d.kind, tiledflow::Kind::ScopLeft { .. }))
                            .count(),
                    "transformed": out.reports.len(),
                    "diagnostics": out.diagnostics.iter().map(|d| d.json()).collect::<Vec<_>>(),
                }));
                if cmd.ours.verbose {
                    for r in &out.reports {
                        eprintln!("{}", r.line(shown));
                    }
                }
                // A file without a transformed SCoP is compiled as it is.
                if !out.reports.is_empty() {
                    let text = format!("#line 1 \"{}\"\n{}", c_string(shown), out.text);
                    let cuda = out.cuda.filter(|cu| cc_cuda::has_kernels(cu));
                    transformed.push(Transformed { arg, text, cuda });
                }
            }
            Err(e) => {
                if cmd.ours.strict {
                    return Err(format!("{shown}: {e}"));
                }
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                eprintln!("tiledflow-cc: warning: {shown}: compiled without tiledflow: {first}");
                report.push(serde_json::json!({
                    "source": shown,
                    "scops": 0,
                    "transformed": 0,
                    "diagnostics": [],
                    "as_written": first,
                }));
            }
        }
    }
    let mut as_written = None;
    let code = compile(&mut cmd, transformed, stdin_text, &mut as_written);
    // The report is for the user's tools: failing to write it does not fail the build.
    if let Some(path) = &cmd.ours.report {
        if let Err(e) = write_report(path, report, as_written.as_deref()) {
            eprintln!("tiledflow-cc: warning: {e}");
        }
    }
    code
}

/// Appends the sources' records to the report file `path` (`--tiledflow-report`), one JSON line
/// each, written with one `write` to a file opened for appending (so that the records of
/// concurrent commands, `make -j`, do not interleave); `as_written`: why the command's
/// transformed sources were replaced by the user's (the compiler rejected them).
fn write_report(
    path: &Path,
    records: Vec<serde_json::Value>,
    as_written: Option<&str>,
) -> Result<(), String> {
    let mut text = String::new();
    for mut r in records {
        if let (Some(why), None) = (as_written, r.get("as_written")) {
            if r["transformed"] != 0 {
                r["as_written"] = why.into();
            }
        }
        text.push_str(&r.to_string());
        text.push('\n');
    }
    if text.is_empty() {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("--tiledflow-report={}: {e}", path.display()))
}

/// The pipeline's options for `cmd`; `TILEDFLOW_FUSE=min|smart|max|reuse|S0+S1,S2` fixes the fusion.
fn pipeline_options(cmd: &CcCommand) -> Result<Options, String> {
    let mut opts = Options {
        clang_args: cc::LENIENT_PARSER_FLAGS
            .iter()
            .map(|f| f.to_string())
            .chain(cmd.parser_flags.iter().cloned())
            .collect(),
        line_directives: true,
        strict: cmd.ours.strict,
        notes: cmd.ours.verbose || cmd.ours.report.is_some(),
        target: cmd.ours.target,
        scop: cmd.ours.scop,
        replace_pragmas: cmd.ours.replace_pragmas,
        granularity: cmd.ours.granularity,
        scop_time_limit: tiledflow::scop_time_limit(cmd.ours.scop_time_limit),
        no_line_shift: cmd.ours.no_line_shift,
        no_spread: cmd.ours.no_spread,
        no_interleave: cmd.ours.no_interleave,
        ..Options::default()
    };
    if cmd.ours.no_tile {
        opts.schedule.tile_sizes = None;
    } else if let Some(ts) = &cmd.ours.tile_sizes {
        opts.schedule.tile_sizes = Some(ts.clone());
    }
    let fusion = match (cmd.ours.fuse.clone(), std::env::var("TILEDFLOW_FUSE")) {
        (Some(fusion), _) => fusion,
        (None, Err(_)) => tiledflow::Fusion::Auto,
        (None, Ok(f)) => tiledflow::Fusion::parse(&f)
            .ok_or_else(|| format!("TILEDFLOW_FUSE={f}: expected {}", tiledflow::FUSION_NAMES))?,
    };
    fusion.apply(&mut opts);
    let autotune = cmd.ours.autotune || std::env::var("TILEDFLOW_AUTOTUNE").is_ok_and(|v| v == "1");
    if autotune && cmd.ours.autotune && !opts.fuse_by_cost {
        return Err(
            "--tiledflow-autotune chooses each SCoP's fusion: it cannot be combined with --tiledflow-fuse=min, smart or max".into(),
        );
    }
    // A fixed fusion from TILEDFLOW_FUSE wins over TILEDFLOW_AUTOTUNE=1: both are the build's
    // environment, and the fixed one is the narrower request.
    if autotune && opts.fuse_by_cost {
        let exe = std::env::current_exe().unwrap_or_default();
        let mut cc = real_compiler();
        cc.extend(cc::codegen_flags(&cmd.args));
        opts.autotune = Some(tiledflow::autotune::Autotune {
            cc,
            params: Vec::new(),
            budget: std::time::Duration::from_secs(tiledflow::autotune::DEFAULT_BUDGET),
            wisdom: tiledflow::autotune::default_wisdom(),
            runtime: cc::find_runtime(&exe, false),
        });
    }
    Ok(opts)
}

/// The real compiler's command words: `TILEDFLOW_CC`, else `cc`.
fn real_compiler() -> Vec<String> {
    let line = std::env::var("TILEDFLOW_CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".into());
    line.split_whitespace().map(String::from).collect()
}

/// Runs the real compiler on the transformed sources, then repairs dependency files.
fn compile(
    cmd: &mut CcCommand,
    transformed: Vec<Transformed>,
    stdin_text: Option<Vec<u8>>,
    as_written: &mut Option<String>,
) -> Result<ExitCode, String> {
    let tmp = tempfile::Builder::new()
        .prefix("tiledflow-cc.")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    // What the user gave, for compiling it as written if the transformed sources do not compile.
    let user_args = cmd.args.clone();
    let user_stdin = stdin_text.clone();
    let mut stdin_text = stdin_text;
    let mut quote_dirs = Vec::new();
    let mut renames = Vec::new();
    // (the source as the user named it, its kernel file, a directory of its own)
    let mut kernel_files: Vec<(String, String, PathBuf)> = Vec::new();
    for (n, t) in transformed.into_iter().enumerate() {
        let user = cmd.args[t.arg].clone();
        if let Some(cu) = t.cuda {
            let dir = tmp.path().join(format!("cu{n}"));
            std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            kernel_files.push((user.clone(), cu, dir));
        }
        if user == "-" {
            // Standard input stays standard input: the compiler reads the transformed text there.
            if let Some(keep) = &cmd.ours.keep {
                write_keep(keep, "stdin.c", &t.text)?;
            }
            stdin_text = Some(t.text.into_bytes());
            continue;
        }
        keep_copy(cmd, &user, &t.text)?;
        // Same file name in a private directory: `cc -c` names the object after it.
        let dir = tmp.path().join(n.to_string());
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let user_path = Path::new(&user);
        let dst = dir.join(user_path.file_name().unwrap_or("source.c".as_ref()));
        std::fs::write(&dst, &t.text).map_err(|e| format!("{}: {e}", dst.display()))?;
        let parent = user_path.parent().filter(|p| !p.as_os_str().is_empty());
        // Quoted includes are looked up next to the including file first: keep that.
        quote_dirs.extend([
            "-iquote".to_string(),
            parent.unwrap_or(Path::new(".")).display().to_string(),
        ]);
        renames.push((
            format!("{}/", dir.display()),
            parent
                .map(|p| format!("{}/", p.display()))
                .unwrap_or_default(),
        ));
        cmd.args[t.arg] = dst.display().to_string();
    }
    let mut args = quote_dirs;
    args.append(&mut cmd.args.clone());
    let cuda = cmd.ours.target == taskgen::Target::Cuda;
    // A link of objects compiled earlier (`make`) needs the C++ compiler only for -lstdc++.
    let cxx = if !kernel_files.is_empty() {
        emulation_problem(cmd, cc_cuda::find_cxx())?
    } else if cuda && cmd.links() {
        cc_cuda::find_cxx().ok()
    } else {
        None
    };
    let emulated = match &cxx {
        Some(cxx) => emulated_objects(cmd, cxx, &kernel_files)?,
        None => Vec::new(),
    };
    let runtime = if cmd.links() {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot locate tiledflow-cc itself: {e}"))?;
        Some(cc::find_runtime(&exe, cuda)?.display().to_string())
    } else {
        None
    };
    let objects: Vec<String> = emulated
        .iter()
        .map(|(_, obj)| obj.display().to_string())
        .collect();
    add_our_args(cmd, &mut args, runtime.as_deref(), &objects, cxx.is_some());
    let compiler_words = real_compiler();
    let transformed_any = !renames.is_empty() || stdin_text != user_stdin;
    // The transformed sources' diagnostics are held back until the compiler has succeeded on
    // them: if it fails, the user's own sources are compiled instead (below).
    let (status, held) = run_compiler(&compiler_words, &args, stdin_text, transformed_any)?;
    if !status.success() && transformed_any {
        return compile_as_written(
            cmd,
            &compiler_words,
            user_args,
            user_stdin,
            runtime,
            &held,
            as_written,
        );
    }
    std::io::stderr()
        .write_all(&held)
        .map_err(|e| format!("writing the compiler's messages: {e}"))?;
    if status.success() && cmd.mode == cc::Mode::Compile {
        for (user, obj) in &emulated {
            let target = cc_cuda::object_of(cmd, user);
            let why = match &target {
                Some(target) => match cc_cuda::merge_into(&compiler_words, target, obj) {
                    Ok(()) => continue,
                    Err(e) => {
                        if cmd.ours.strict {
                            // Not left behind for make to take as up to date.
                            let _ = std::fs::remove_file(target);
                        }
                        e
                    }
                },
                None => "there is no object file to put them in (-S, or standard input without -o)"
                    .to_string(),
            };
            emulation_problem(cmd, Err::<(), _>(format!("{user}: {why}")))?;
        }
    }
    if status.success() && cmd.writes_dependencies && !renames.is_empty() {
        for f in cc::dependency_files(cmd) {
            cc::fix_dependency_file(&f, &renames).map_err(|e| format!("{}: {e}", f.display()))?;
        }
    }
    Ok(exit_code(status))
}

/// What tiledflow-cc adds after the user's arguments: `-fopenmp` for the omp target (the
/// parallel loops' pragmas when compiling, libgomp when linking) and, when it links, `objects`,
/// the runtime and the libraries they need (after `-x none`: they are libraries and objects even
/// after `-x c`).
fn add_our_args(
    cmd: &CcCommand,
    args: &mut Vec<String>,
    runtime: Option<&str>,
    objects: &[String],
    cxx: bool,
) {
    if cmd.ours.target == taskgen::Target::Omp {
        args.push("-fopenmp".to_string());
    }
    if let Some(runtime) = runtime {
        args.extend(["-x".to_string(), "none".to_string()]);
        args.extend(objects.iter().cloned());
        args.push(runtime.to_string());
        if cxx {
            args.push("-lstdc++".to_string());
        }
        args.extend(["-lpthread", "-ldl", "-lm"].map(String::from));
    }
}

fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
        None => ExitCode::from(1),
    }
}

/// Runs the real compiler (`words`: the command and its own leading arguments) with `args`,
/// feeding `stdin_text` to its standard input when given. With `hold`, its standard error is
/// returned instead of shown.
fn run_compiler(
    words: &[String],
    args: &[String],
    stdin_text: Option<Vec<u8>>,
    hold: bool,
) -> Result<(std::process::ExitStatus, Vec<u8>), String> {
    let compiler = words.first().map_or("cc", String::as_str);
    let mut command = Command::new(compiler);
    command
        .args(&words[1.min(words.len())..])
        .args(args)
        .env(NESTED, "1");
    if stdin_text.is_some() {
        command.stdin(Stdio::piped());
    }
    if hold {
        command.stderr(Stdio::piped());
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run the C compiler `{compiler}`: {e}"))?;
    let feeder = match (stdin_text, child.stdin.take()) {
        // A compiler that stops reading early (an error) closes the pipe: its status says why.
        // Written from a thread of its own: the compiler may fill its standard error first.
        (Some(text), Some(mut pipe)) => Some(std::thread::spawn(move || {
            let _ = pipe.write_all(&text);
        })),
        _ => None,
    };
    let mut held = Vec::new();
    if let Some(mut err) = child.stderr.take() {
        err.read_to_end(&mut held)
            .map_err(|e| format!("reading `{compiler}`'s messages: {e}"))?;
    }
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for `{compiler}`: {e}"))?;
    Ok((status, held))
}

/// The compiler failed on the transformed sources: compiles the user's sources as written (with
/// the runtime still linked, for objects that tiledflow-cc compiled before), with one warning
/// that names the compiler's first error; under strict, that is an error with the compiler's
/// messages. If the user's sources fail too, the compiler's messages about them are the answer.
fn compile_as_written(
    cmd: &CcCommand,
    words: &[String],
    mut args: Vec<String>,
    stdin_text: Option<Vec<u8>>,
    runtime: Option<String>,
    held: &[u8],
    as_written: &mut Option<String>,
) -> Result<ExitCode, String> {
    let messages = String::from_utf8_lossy(held);
    let first = messages
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| messages.lines().next())
        .unwrap_or("no message")
        .trim();
    if cmd.ours.strict {
        return Err(format!(
            "the transformed source does not compile (a tiledflow bug; please report it):\n{messages}"
        ));
    }
    add_our_args(cmd, &mut args, runtime.as_deref(), &[], false);
    let (status, _) = run_compiler(words, &args, stdin_text, false)?;
    if status.success() {
        eprintln!(
            "tiledflow-cc: warning: compiled without tiledflow: the transformed source does not compile \
             (a tiledflow bug; please report it): {first}"
        );
        *as_written = Some(format!("the transformed source does not compile: {first}"));
    }
    Ok(exit_code(status))
}

/// The emulated kernels of each kernel file (see `tiledflow::cc_cuda`): `(user's source, object)`.
/// A kernel file the C++ compiler fails on is left out with a warning (an error under strict).
fn emulated_objects(
    cmd: &CcCommand,
    cxx: &[String],
    kernel_files: &[(String, String, PathBuf)],
) -> Result<Vec<(String, PathBuf)>, String> {
    let flags = cc_cuda::emulation_flags(cmd);
    let mut objects = Vec::new();
    for (user, cu, dir) in kernel_files {
        let stem = Path::new(user)
            .file_stem()
            .map_or("stdin".into(), |s| s.to_string_lossy());
        let built = cc_cuda::compile_emulation(cxx, &flags, cu, &stem, dir)
            .map_err(|e| format!("{user}: {e}"));
        if let Some(obj) = emulation_problem(cmd, built)? {
            objects.push((user.clone(), obj));
        }
    }
    Ok(objects)
}

/// A step of the emulated kernels' build that failed: an error under strict, else a warning
/// saying what the program will do; `Ok(None)` then.
fn emulation_problem<T>(cmd: &CcCommand, r: Result<T, String>) -> Result<Option<T>, String> {
    match r {
        Ok(x) => Ok(Some(x)),
        Err(e) if cmd.ours.strict => Err(format!("--tiledflow-target=cuda: emulated kernels: {e}")),
        Err(e) => {
            eprintln!(
                "tiledflow-cc: warning: --tiledflow-target=cuda: {e}\n\
                 tiledflow-cc: the program is built without emulated kernels; TILEDFLOW_GPU=emulate runs its CPU task version"
            );
            Ok(None)
        }
    }
}

/// `--tiledflow-keep=DIR`: a copy of the transformed source for the user to read.
fn keep_copy(cmd: &CcCommand, user: &str, text: &str) -> Result<(), String> {
    match (&cmd.ours.keep, Path::new(user).file_name()) {
        (Some(dir), Some(name)) => write_keep(dir, &name.to_string_lossy(), text),
        _ => Ok(()),
    }
}

fn write_keep(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let path: PathBuf = dir.join(name);
    tiledflow::write_atomically(&path, text)
        .map_err(|e| format!("--tiledflow-keep: cannot write {}: {e}", path.display()))
}

/// `s` as the inside of a C string literal.
fn c_string(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
