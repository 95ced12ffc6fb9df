//! Any bytes as a kernel log or an audit.log: AVC records or errors naming their line, never a
//! panic; every record written back out as the kernel writes one reads as the same record.
#![no_main]
use libfuzzer_sys::fuzz_target;
use seaccess_tools::audit;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text.lines().count();
    for r in audit::read(&text) {
        let r = match r {
            Ok(r) => r,
            Err(seaccess_tools::ToolsError::Record { line, .. }) => {
                assert!((1..=lines).contains(&line));
                continue;
            }
            Err(e) => panic!("not a record error: {e:?}"),
        };
        // Values with white space or quotes cannot be written bare; the required three are
        // checked whenever they can.
        let plain = |v: &str| {
            !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'')
        };
        if !(plain(&r.scontext)
            && plain(&r.tcontext)
            && plain(&r.tclass)
            && r.perms.iter().all(|p| plain(p) && !p.contains(['{', '}'])))
        {
            continue;
        }
        let line = format!(
            "avc:  {}  {{ {} }} for  scontext={} tcontext={} tclass={}{}",
            if r.denied { "denied" } else { "granted" },
            r.perms.join(" "),
            r.scontext,
            r.tcontext,
            r.tclass,
            r.permissive
                .map_or(String::new(), |p| format!(" permissive={}", u8::from(p)))
        );
        let back = match audit::read_line(1, &line) {
            Some(Ok(b)) => b,
            other => panic!("{line:?}: {other:?}"),
        };
        assert_eq!(
            (
                back.denied,
                &back.perms,
                &back.scontext,
                &back.tcontext,
                &back.tclass,
                back.permissive
            ),
            (
                r.denied,
                &r.perms,
                &r.scontext,
                &r.tcontext,
                &r.tclass,
                r.permissive
            ),
            "{line:?}"
        );
    }
});
