//! A reload resolves the SIDs it keeps through the live server. The mount once checked the new
//! files on a scratch server and kept the default caller's SID from that server's SID table,
//! while every check used the live one's: right only while both tables happened to number
//! the unconfined context alike, which a subjects file that gains a rule breaks.

use super::*;
const UNCONFINED: &str = "unconfined_u:unconfined_r:unconfined_t:s0";

const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const USER: &str = "user_u:user_r:user_t:s0";

#[test]
fn the_default_callers_sid_after_a_reload_is_the_live_servers() {
    let Some(policy) = ready("the_default_callers_sid_after_a_reload_is_the_live_servers") else {
        return;
    };
    let s = Scratch::new("reload-default-sid");
    let subjects = s.dir.join("subjects");
    std::fs::write(&subjects, format!("uid=54321 {USER}\n")).unwrap();
    let mut o = s.options(&policy, &s.dir.join("mnt"));
    o.subjects = Some(subjects.clone());
    let core = Core::new(o).unwrap();
    let server = core.server().clone();
    let before = core.labels().default_sid;
    assert_eq!(server.sid_to_context(before).unwrap(), UNCONFINED);
    // A rule whose context the live server has not numbered yet, ahead of the others: a
    // scratch server of the new policy numbers it first, and the rest one further on.
    std::fs::write(&subjects, format!("uid=54322 {HTTPD}\nuid=54321 {USER}\n")).unwrap();
    core.reload().unwrap();
    let after = core.labels().default_sid;
    assert_eq!(
        server.sid_to_context(after).unwrap(),
        UNCONFINED,
        "the default caller's SID after the reload names another context in the live server"
    );
    assert_eq!(after, before);
}
