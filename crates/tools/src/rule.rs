//! One allow rule written as audit2allow writes it (sepolgen's policygen and output modules):
//! shared by `allow`, which writes a module of them, and `explain`, which names the rule a
//! denial lacks.

/// The rule text, in audit2allow's form: the target `self` when it is the source, one
/// permission bare, several in sorted braces.
pub fn rule_text(source: &str, target: &str, class: &str, perms: &[&str]) -> String {
    rule_line(
        "allow",
        source,
        if target == source { "self" } else { target },
        class,
        perms,
    )
}

pub(crate) fn rule_line(
    kind: &str,
    source: &str,
    target: &str,
    class: &str,
    perms: &[&str],
) -> String {
    format!("{kind} {source} {target}:{class} {};", space_set(perms))
}

/// sepolgen's list_to_space_str over a sorted set: `read`, or `{ open read }`.
pub(crate) fn space_set(items: &[&str]) -> String {
    match items {
        [one] => (*one).to_string(),
        _ => format!("{{ {} }}", items.join(" ")),
    }
}
