//! Embedding seaccess: one question by names, then several by numbers in one policy generation.
use seaccess_engine::{Engine, EngineError};

fn main() -> Result<(), EngineError> {
    let engine = Engine::open("/etc/selinux/default/policy/policy.33")?;

    // By names: resolved, decided and audited in one generation.
    let httpd = "system_u:system_r:httpd_t:s0";
    let a = engine.check(httpd, "system_u:object_r:shadow_t:s0", "file", &["read"])?;
    let denied = a.denied_names();
    println!("read shadow_t: {} (denied {denied:?})", a.allowed());

    // By numbers: a SID, a class or a permission bit means something only in the generation it
    // was resolved in. with_generation resolves and decides in one, and runs the closure again
    // when a reload or a boolean commit lands in between; never keep numbers across calls.
    let types = ["httpd_sys_content_t", "httpd_sys_script_exec_t", "shadow_t"];
    let answers = engine.with_generation(|g| {
        let (source, (file, read)) = (g.sid(httpd)?, g.class_perms("file", &["read", "open"])?);
        let mut answers = Vec::new();
        for t in types {
            let target = g.sid(&format!("system_u:object_r:{t}:s0"))?;
            answers.push((t, g.check(source, target, file, read)?.allowed()));
        }
        Ok(answers)
    })?;
    for (t, allowed) in answers {
        println!("read open {t}: {allowed}");
    }
    Ok(())
}
