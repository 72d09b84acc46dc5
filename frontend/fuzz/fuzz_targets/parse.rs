//! libFuzzer target: any bytes, as C source, through the frontend in one of its SCoP modes
//! (chosen by the first byte). A panic, or a diagnostic without `file:line:col`, is a finding.

#![no_main]

use frontend::{parse_source, Error, Options, ScopMode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let scop = match mode % 3 {
        0 => ScopMode::PragmaIfPresent,
        1 => ScopMode::Pragma,
        _ => ScopMode::Auto,
    };
    let text = String::from_utf8_lossy(rest);
    let opts = Options {
        scop,
        ..Options::default()
    };
    let diags = match parse_source("fuzz.c", &text, &opts) {
        Ok((file, diags)) => {
            let mut end = 0;
            for s in &file.scops {
                assert!(end <= s.region.start && s.region.start < s.region.end);
                assert!(s.region.end <= text.len());
                end = s.region.end;
                let _ = frontend::scop_to_string(s);
            }
            diags
        }
        Err(Error::Parse(diags)) => diags,
        Err(e) => panic!("unexpected error: {e}"),
    };
    for d in &diags {
        assert!(!d.file.is_empty() && d.loc.line >= 1 && d.loc.col >= 1, "{d}");
    }
});
