//! seinfo's listings: a policy's types, attributes, roles, users, classes and booleans, all or
//! one by name, each with the statement `seinfo -x` prints for it (setools 4.4's `statement()`).

use seaccess_policy::PolicyTables;
use serde::Serialize;

use super::names::{aliases, attributes_of, expansions, is_attribute, is_type, lookup, type_name};
use super::text::{level_text, range_text};
use crate::ToolsError;

/// What seinfo lists.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Component {
    Types,
    Attributes,
    Roles,
    Users,
    Classes,
    Booleans,
}

impl Component {
    /// The heading seinfo prints above the list (`Types: 3936`).
    pub fn title(self) -> &'static str {
        match self {
            Component::Types => "Types",
            Component::Attributes => "Type Attributes",
            Component::Roles => "Roles",
            Component::Users => "Users",
            Component::Classes => "Classes",
            Component::Booleans => "Booleans",
        }
    }

    /// The key of the list in JSON output.
    pub fn key(self) -> &'static str {
        match self {
            Component::Types => "types",
            Component::Attributes => "attributes",
            Component::Roles => "roles",
            Component::Users => "users",
            Component::Classes => "classes",
            Component::Booleans => "booleans",
        }
    }
}

/// One entry of a listing: its name, what it holds, and seinfo's statement for it.
#[derive(Clone, Debug, Serialize)]
pub struct Item {
    pub name: String,
    #[serde(flatten)]
    pub detail: Detail,
    /// What `seinfo -x` prints for it (an attribute's or class's spans lines).
    pub statement: String,
}

/// What an entry holds, by component.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Detail {
    Type {
        aliases: Vec<String>,
        attributes: Vec<String>,
        permissive: bool,
    },
    Attribute {
        types: Vec<String>,
    },
    Role {
        types: Vec<String>,
    },
    User {
        roles: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        level: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        range: Option<String>,
    },
    Class {
        #[serde(skip_serializing_if = "Option::is_none")]
        common: Option<String>,
        perms: Vec<String>,
        inherited: Vec<String>,
    },
    Bool {
        state: bool,
    },
}

/// `{ a b }` for several names, the name alone for one, `{  }` for none, as setools writes sets.
fn set_text(v: &[String]) -> String {
    match v {
        [one] => one.clone(),
        _ => format!("{{ {} }}", v.join(" ")),
    }
}

/// The entries of `what` (the one named `name`, if given), sorted by name as seinfo sorts them.
/// A name the policy does not have as `what` is an error with the nearest names.
pub fn list(
    p: &PolicyTables,
    what: Component,
    name: Option<&str>,
) -> Result<Vec<Item>, ToolsError> {
    let mut items = match what {
        Component::Types => types(p, name)?,
        Component::Attributes => attributes(p, name)?,
        Component::Roles => {
            let values = pick(&p.role_names, "role", name)?;
            values.into_iter().map(|r| role(p, r)).collect()
        }
        Component::Users => pick(&p.user_names, "user", name)?
            .into_iter()
            .map(|u| user(p, u))
            .collect(),
        Component::Classes => pick(&p.class_names, "class", name)?
            .into_iter()
            .map(|c| class(p, c))
            .collect(),
        Component::Booleans => pick(&p.bool_names, "boolean", name)?
            .into_iter()
            .map(|b| {
                let name = p.bool_names.name(b).unwrap_or("?").to_string();
                let state = p.bools.get(b as usize - 1).is_some_and(|x| x.state);
                Item {
                    statement: format!("bool {name} {state};"),
                    name,
                    detail: Detail::Bool { state },
                }
            })
            .collect(),
    };
    items.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(items)
}

/// Every defined value of a table, or the one `name` names.
fn pick(
    names: &seaccess_policy::Names,
    what: &'static str,
    name: Option<&str>,
) -> Result<Vec<u32>, ToolsError> {
    match name {
        Some(n) => Ok(vec![lookup(names, what, n)?]),
        None => Ok((1..=names.len() as u32)
            .filter(|v| names.is_defined(*v))
            .collect()),
    }
}

/// A type or attribute by name, refusing one of the other kind with a pointer to the right option.
fn one_type(p: &PolicyTables, name: &str, attribute: bool) -> Result<u32, ToolsError> {
    let v = lookup(
        &p.type_names,
        if attribute { "attribute" } else { "type" },
        name,
    )?;
    match (attribute, is_attribute(p, v)) {
        (false, true) => Err(ToolsError::Query(format!(
            "{name} is an attribute, not a type (list it with --attribute)"
        ))),
        (true, false) => Err(ToolsError::Query(format!(
            "{name} is a type, not an attribute (list it with --type)"
        ))),
        _ => Ok(v),
    }
}

fn types(p: &PolicyTables, name: Option<&str>) -> Result<Vec<Item>, ToolsError> {
    let values: Vec<u32> = match name {
        Some(n) => vec![one_type(p, n, false)?],
        None => (1..=p.types.len() as u32)
            .filter(|v| is_type(p, *v))
            .collect(),
    };
    let al = aliases(&p.type_names, 512);
    Ok(values
        .into_iter()
        .map(|t| {
            let name = type_name(p, t).to_string();
            let aliases: Vec<String> = al
                .get(t as usize)
                .map(|v| v.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            let attributes: Vec<String> = attributes_of(p, t)
                .into_iter()
                .map(|a| type_name(p, a).to_string())
                .collect();
            let mut statement = format!("type {name}");
            if !aliases.is_empty() {
                statement.push_str(&format!(" alias {}", set_text(&aliases)));
            }
            for a in &attributes {
                statement.push_str(&format!(", {a}"));
            }
            statement.push(';');
            Item {
                statement,
                name,
                detail: Detail::Type {
                    aliases,
                    attributes,
                    permissive: p.permissive.get(t),
                },
            }
        })
        .collect())
}

fn attributes(p: &PolicyTables, name: Option<&str>) -> Result<Vec<Item>, ToolsError> {
    let values: Vec<u32> = match name {
        Some(n) => vec![one_type(p, n, true)?],
        None => (1..=p.types.len() as u32)
            .filter(|v| is_attribute(p, *v) && p.type_names.is_defined(*v))
            .collect(),
    };
    let exp = expansions(p);
    Ok(values
        .into_iter()
        .map(|a| {
            let name = type_name(p, a).to_string();
            let mut types: Vec<String> = exp
                .get(a as usize)
                .map(|v| v.iter().map(|t| type_name(p, *t).to_string()).collect())
                .unwrap_or_default();
            types.sort_unstable();
            let members = if types.is_empty() {
                "<empty attribute>".to_string()
            } else {
                types.join("\n\t")
            };
            Item {
                statement: format!("attribute {name};\n\t{members}"),
                name,
                detail: Detail::Attribute { types },
            }
        })
        .collect())
}

fn role(p: &PolicyTables, r: u32) -> Item {
    let name = p.role_names.name(r).unwrap_or("?").to_string();
    let mut types: Vec<String> = p
        .roles
        .get(r as usize - 1)
        .map(|x| {
            x.types
                .iter()
                .map(|b| b + 1)
                .filter(|t| p.type_names.is_defined(*t))
                .map(|t| type_name(p, t).to_string())
                .collect()
        })
        .unwrap_or_default();
    types.sort_unstable();
    Item {
        statement: format!("role {name} types {};", set_text(&types)),
        name,
        detail: Detail::Role { types },
    }
}

fn user(p: &PolicyTables, u: u32) -> Item {
    let name = p.user_names.name(u).unwrap_or("?").to_string();
    let x = p.users.get(u as usize - 1);
    let mut roles: Vec<String> = x
        .map(|x| {
            x.roles
                .iter()
                .filter_map(|b| p.role_names.name(b + 1))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    roles.sort_unstable();
    let (level, range) = match x {
        Some(x) if p.mls => (
            Some(level_text(p, &x.default_level)),
            Some(range_text(p, &x.range)),
        ),
        _ => (None, None),
    };
    let mut statement = format!("user {name} roles {}", set_text(&roles));
    if let (Some(l), Some(r)) = (&level, &range) {
        statement.push_str(&format!(" level {l} range {r}"));
    }
    statement.push(';');
    Item {
        statement,
        name,
        detail: Detail::User {
            roles,
            level,
            range,
        },
    }
}

fn class(p: &PolicyTables, c: u32) -> Item {
    let name = p.class_names.name(c).unwrap_or("?").to_string();
    let x = p.classes.get(c as usize - 1);
    let common = x
        .and_then(|x| x.common)
        .and_then(|v| p.commons.get(v as usize - 1));
    let mut inherited: Vec<String> = common
        .map(|cm| {
            cm.perms
                .by_value
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.to_string())
                .collect()
        })
        .unwrap_or_default();
    inherited.sort_unstable();
    let mut perms: Vec<String> = x
        .map(|x| {
            x.perms
                .by_value
                .iter()
                .filter(|s| {
                    !s.is_empty() && inherited.binary_search_by(|i| i.as_str().cmp(s)).is_err()
                })
                .map(|s| s.to_string())
                .collect()
        })
        .unwrap_or_default();
    perms.sort_unstable();
    let mut statement = format!("class {name}\n");
    if let Some(cm) = common {
        statement.push_str(&format!("inherits {}\n", cm.name));
    }
    if !perms.is_empty() {
        statement.push_str("{\n");
        for perm in &perms {
            statement.push_str(&format!("\t{perm}\n"));
        }
        statement.push('}');
    }
    Item {
        statement,
        name,
        detail: Detail::Class {
            common: common.map(|cm| cm.name.to_string()),
            perms,
            inherited,
        },
    }
}
