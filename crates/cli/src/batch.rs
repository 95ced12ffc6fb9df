//! The batch modes: one query a line in, one answer a line out.

use std::io::BufRead;

use rustc_hash::FxHashMap;
use seaccess_security::{Generation, SecurityError};
use seaccess_types::{ClassId, Sid};

use clap::Args;
use serde_json::json;

use crate::output::{warn, CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
pub(crate) struct BatchArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
    /// One JSON object per line instead: {"line": N, ...the answer's fields} (compute-av:
    /// allowed, auditallow and dontaudit as permission names, seqno, permissive; the others:
    /// context), or {"line": N, "error": "..."} for a line that cannot be answered.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    Av,
    Create,
    Relabel,
    Member,
}

/// Context strings already turned into SIDs, so that a batch with repeated contexts parses each
/// one once.
struct Resolver<'g> {
    g: &'g Generation,
    sids: FxHashMap<String, Sid>,
    classes: FxHashMap<String, ClassId>,
}

impl Resolver<'_> {
    fn sid(&mut self, s: &str) -> Result<Sid, SecurityError> {
        if let Some(&sid) = self.sids.get(s) {
            return Ok(sid);
        }
        let sid = self.g.context_to_sid(s)?;
        self.sids.insert(s.to_string(), sid);
        Ok(sid)
    }
    fn class(&mut self, c: &str) -> Result<ClassId, SecurityError> {
        if let Some(&k) = self.classes.get(c) {
            return Ok(k);
        }
        let k = self.g.class(c)?;
        self.classes.insert(c.to_string(), k);
        Ok(k)
    }
}

/// Why a line got no answer: the line itself (reported, and the batch goes on), or the output
/// (the batch stops).
enum LineError {
    Query(String),
    Output(CliError),
}

impl From<String> for LineError {
    fn from(s: String) -> Self {
        LineError::Query(s)
    }
}

impl From<&str> for LineError {
    fn from(s: &str) -> Self {
        LineError::Query(s.to_string())
    }
}

impl From<CliError> for LineError {
    fn from(e: CliError) -> Self {
        LineError::Output(e)
    }
}

/// The names of a vector's permissions of a class.
fn names(g: &Generation, class: ClassId, v: u32) -> Vec<&str> {
    (0..32)
        .filter(|b| v & (1 << b) != 0)
        .filter_map(|b| g.perm_name(class, b))
        .collect()
}

fn answer(
    r: &mut Resolver<'_>,
    mode: Mode,
    json: Option<usize>,
    line: &str,
    out: &mut Out,
) -> Result<(), LineError> {
    let mut f = line.split_ascii_whitespace();
    let (Some(s), Some(t), Some(c)) = (f.next(), f.next(), f.next()) else {
        return Err("expected SCON TCON CLASS".into());
    };
    let name = f.next();
    if f.next().is_some() || (name.is_some() && mode != Mode::Create) {
        return Err("too many fields".into());
    }
    let ssid = r.sid(s).map_err(|e| e.to_string())?;
    let tsid = r.sid(t).map_err(|e| e.to_string())?;
    let class = r.class(c).map_err(|e| e.to_string())?;
    let g = r.g;
    let res = match mode {
        Mode::Av => {
            let d = g.compute_av(ssid, tsid, class).map_err(|e| e.to_string())?;
            if let Some(n) = json {
                let v = json!({
                    "line": n,
                    "allowed": names(g, class, d.allowed.0),
                    "auditallow": names(g, class, d.auditallow.0),
                    "dontaudit": names(g, class, !d.auditdeny.0),
                    "seqno": d.seqno.0,
                    "permissive": d.flags.permissive(),
                });
                writeln!(out, "{v}")?;
                return Ok(());
            }
            writeln!(
                out,
                "{:x} {:x} {:x} {:x} {} {:x}",
                d.allowed, d.decided, d.auditallow, d.auditdeny, d.seqno, d.flags.0
            )?;
            return Ok(());
        }
        Mode::Create => g.compute_create(ssid, tsid, class, name),
        Mode::Relabel => g.compute_relabel(ssid, tsid, class),
        Mode::Member => g.compute_member(ssid, tsid, class),
    };
    let sid = res.map_err(|e| e.to_string())?;
    let ctx = g.sid_to_context(sid).map_err(|e| e.to_string())?;
    match json {
        Some(n) => Ok(writeln!(out, "{}", json!({"line": n, "context": ctx}))?),
        None => Ok(writeln!(out, "{ctx}")?),
    }
}

/// Answers every line of standard input. Ok(false) when some line could not be answered.
pub(crate) fn run(out: &mut Out, args: &BatchArgs, mode: Mode) -> Result<bool, CliError> {
    let engine = crate::load(&args.policy)?;
    let server = engine.server();
    let g = server.snapshot();
    let mut r = Resolver {
        g: &g,
        sids: FxHashMap::default(),
        classes: FxHashMap::default(),
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut ok = true;
    let mut buf = Vec::new();
    let mut n = 0usize;
    loop {
        buf.clear();
        let got = input
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("reading standard input: {e}"))?;
        if got == 0 {
            break;
        }
        n += 1;
        let result = match std::str::from_utf8(&buf) {
            Ok(line) => answer(
                &mut r,
                mode,
                args.json.then_some(n),
                line.trim_end_matches(['\n', '\r']),
                out,
            ),
            Err(_) => Err("not UTF-8 text".into()),
        };
        match result {
            Ok(()) => {}
            Err(LineError::Query(e)) => {
                ok = false;
                if args.json {
                    writeln!(out, "{}", json!({"line": n, "error": e}))?;
                } else {
                    writeln!(out, "error")?;
                }
                warn(&format!("line {n}: {e}"));
            }
            Err(LineError::Output(e)) => return Err(e),
        }
    }
    Ok(ok)
}
