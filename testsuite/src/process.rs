//! Running external programs: compiling C with a compiler or driver that takes `cc`'s flags, and
//! running a built program under a time limit with its output captured.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

/// How much of a failed command's stderr an error message quotes (its end).
const STDERR_QUOTE_LIMIT: usize = 8000;

/// Time limit of [`compile`] and [`compile_with_stderr`]: generous, it only turns a compiler that
/// runs away into an error instead of a hung test suite.
pub const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(600);

/// Compiles and links `sources` into the executable `out`:
/// `<cc_or_driver> <flags...> <sources...> -o <out> -lm`.
///
/// `cc_or_driver` is `cc`, a path such as `bin_dir()/tiledflow-cc`, or anything else that takes
/// `cc`'s flags. `-lm` is appended because kernels may call libm. A failure (the compiler cannot
/// be started, exits non-zero, or runs longer than [`DEFAULT_COMPILE_TIMEOUT`] and is killed) is
/// an error carrying the command line and the compiler's stderr.
pub fn compile<S, F>(
    cc_or_driver: impl AsRef<OsStr>,
    sources: &[S],
    flags: &[F],
    out: &Path,
) -> Result<()>
where
    S: AsRef<OsStr>,
    F: AsRef<OsStr>,
{
    compile_with_stderr(cc_or_driver, sources, flags, out).map(|_| ())
}

/// Like [`compile`], and returns what the compiler wrote on stderr when it succeeded (its
/// warnings; empty for a clean build).
pub fn compile_with_stderr<S, F>(
    cc_or_driver: impl AsRef<OsStr>,
    sources: &[S],
    flags: &[F],
    out: &Path,
) -> Result<String>
where
    S: AsRef<OsStr>,
    F: AsRef<OsStr>,
{
    compile_in_env(
        cc_or_driver,
        sources,
        flags,
        out,
        &[],
        DEFAULT_COMPILE_TIMEOUT,
    )
}

/// [`compile_with_stderr`] with extra environment variables for the compiler and a time limit.
pub fn compile_in_env<S, F>(
    cc_or_driver: impl AsRef<OsStr>,
    sources: &[S],
    flags: &[F],
    out: &Path,
    env: &[(String, String)],
    timeout: Duration,
) -> Result<String>
where
    S: AsRef<OsStr>,
    F: AsRef<OsStr>,
{
    let mut cmd = Command::new(cc_or_driver.as_ref());
    cmd.args(flags).args(sources).arg("-o").arg(out).arg("-lm");
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let shown = show_command(&cmd);
    let output = match run_command(cmd, timeout)? {
        Ok(output) => output,
        Err(partial_stderr) => bail!(
            "compilation did not finish within {timeout:?} and was killed: `{shown}`\n\
             --- compiler stderr ---\n{}",
            tail(
                &String::from_utf8_lossy(&partial_stderr),
                STDERR_QUOTE_LIMIT
            )
        ),
    };
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        bail!(
            "compilation failed ({}): `{shown}`\n--- compiler stderr ---\n{}",
            describe_status(output.status),
            tail(&stderr, STDERR_QUOTE_LIMIT)
        );
    }
    Ok(stderr)
}

/// Runs `exe` with the extra environment variables `env` (added to the inherited environment),
/// stdin closed and stdout/stderr captured, and kills it if it has not finished after `timeout`.
///
/// Returns the output whatever the exit status (callers decide whether a failure is expected);
/// errors are: the program cannot be started, or it ran past `timeout` (the error says so and
/// quotes the end of what it wrote on stderr).
pub fn run(exe: &Path, env: &[(&str, &str)], timeout: Duration) -> Result<Output> {
    run_args(exe, &[], env, timeout)
}

/// [`run`] with command-line arguments.
pub fn run_args(
    exe: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    timeout: Duration,
) -> Result<Output> {
    let mut cmd = Command::new(exe);
    cmd.args(args).envs(env.iter().map(|&(k, v)| (k, v)));
    let shown = show_command(&cmd);
    match run_command(cmd, timeout)? {
        Ok(output) => Ok(output),
        Err(partial_stderr) => {
            bail!(
            "`{shown}` did not finish within {timeout:?} and was killed\n--- its stderr ---\n{}",
            tail(&String::from_utf8_lossy(&partial_stderr), STDERR_QUOTE_LIMIT)
        )
        }
    }
}

/// Runs `cmd` with stdin closed and stdout/stderr captured. `Ok(Ok(output))` when it finished
/// (whatever its status), `Ok(Err(stderr so far))` when it ran past `timeout` and was killed,
/// `Err` when it could not be started or waited for.
fn run_command(
    mut cmd: Command,
    timeout: Duration,
) -> Result<std::result::Result<Output, Vec<u8>>> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let shown = show_command(&cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status =
        wait_with_timeout(&mut child, timeout).with_context(|| format!("waiting for `{shown}`"))?;
    let stdout = join_drain(stdout);
    let stderr = join_drain(stderr);
    Ok(match status {
        Some(status) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        None => Err(stderr),
    })
}

/// Waits for `child`; after `timeout` kills it and returns `None`.
fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Result<Option<ExitStatus>> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if start.elapsed() >= timeout {
            // The child may have exited between try_wait and kill; both outcomes end it.
            let _ = child.kill();
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Reads a pipe to its end on a thread of its own, so that a program filling one pipe never
/// blocks while we wait on the other.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Option<JoinHandle<Vec<u8>>> {
    pipe.map(|mut p| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            // A read error ends the capture; what was read so far is still reported.
            let _ = p.read_to_end(&mut buf);
            buf
        })
    })
}

fn join_drain(handle: Option<JoinHandle<Vec<u8>>>) -> Vec<u8> {
    handle.and_then(|h| h.join().ok()).unwrap_or_default()
}

/// The command line as a user would type it (arguments with spaces quoted).
pub(crate) fn show_command(cmd: &Command) -> String {
    let mut parts: Vec<OsString> = vec![cmd.get_program().to_owned()];
    parts.extend(cmd.get_args().map(OsStr::to_owned));
    parts
        .iter()
        .map(|p| {
            let s = p.to_string_lossy();
            if s.is_empty() || s.contains(char::is_whitespace) || s.contains('"') {
                format!("{s:?}")
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// "exit status 3" or "killed by signal 11".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    status.to_string()
}

/// The last `limit` bytes of `text` (cut at a character boundary), marked when cut.
pub(crate) fn tail(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... {start} bytes omitted ...]\n{}", &text[start..])
}

/// Fails unless `output` says the program exited with status 0; the error quotes its stderr.
pub fn expect_success(what: &str, output: &Output) -> Result<()> {
    if output.status.success() {
        return Ok(());
    }
    Err(anyhow!(
        "{what} failed ({})\n--- its stderr ---\n{}",
        describe_status(output.status),
        tail(&String::from_utf8_lossy(&output.stderr), STDERR_QUOTE_LIMIT)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_and_says_it_cut() {
        assert_eq!(tail("abc", 10), "abc");
        let t = tail("0123456789", 4);
        assert!(t.ends_with("\n6789"), "{t}");
        assert!(t.contains("6 bytes omitted"), "{t}");
        // Never cuts inside a character.
        let t = tail("ééé", 3);
        assert!(t.ends_with("\né"), "{t}");
    }

    #[test]
    fn commands_are_shown_with_quotes_where_needed() {
        let mut cmd = Command::new("cc");
        cmd.args(["-O2", "a b.c", ""]);
        assert_eq!(show_command(&cmd), r#"cc -O2 "a b.c" """#);
    }
}
