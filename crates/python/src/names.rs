//! From the permission names Python passes to the numbers the engine answers on (context strings
//! go through the engine's memo, [`seaccess_engine::Generation::sid`]).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use seaccess_security::{Generation, SecurityError};
use seaccess_types::{AccessVector, ClassId};

/// The permission names a caller passed: one string of names separated by spaces
/// (`"read write"`), or a sequence of names.
pub(crate) fn perm_names(obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return nonempty(
            s.to_str()?
                .split_ascii_whitespace()
                .map(str::to_string)
                .collect(),
        );
    }
    let mut names = Vec::new();
    for item in obj.try_iter().map_err(|_| not_perms(obj))? {
        let item = item?;
        let s = item.cast::<PyString>().map_err(|_| not_perms(&item))?;
        names.push(s.to_str()?.to_string());
    }
    nonempty(names)
}

/// A check asks for at least one permission, as the kernel's avc_has_perm requires.
fn nonempty(names: Vec<String>) -> PyResult<Vec<String>> {
    if names.is_empty() {
        return Err(crate::errors::Error::new_err(
            "no permission named: give at least one",
        ));
    }
    Ok(names)
}

fn not_perms(obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "permissions must be a str or a sequence of str, not {ty}"
    ))
}

/// The access vector of permission names of a class, with the bit of each name in order.
pub(crate) fn perm_bits(
    g: &Generation,
    class: ClassId,
    names: &[String],
) -> Result<(AccessVector, Vec<u32>), SecurityError> {
    let mut av = 0u32;
    let mut bits = Vec::with_capacity(names.len());
    for n in names {
        let v = g.perms(class, &[n.as_str()])?;
        // A permission name stands for exactly one bit, so the lowest is the bit.
        let bit = v.0.trailing_zeros();
        av |= v.0;
        bits.push(bit);
    }
    Ok((AccessVector(av), bits))
}
