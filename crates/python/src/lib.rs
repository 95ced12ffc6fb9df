//! The `seaccess` Python module: the security server and the access vector cache behind a
//! Python API keyed on context, class and permission names (see README, "Python").
//!
//! Every error becomes a Python exception ([`errors`]); no Rust panic or error crosses into the
//! interpreter any other way. Batch calls resolve names once per distinct string and compute
//! with the interpreter released ([`batch`]).

#![forbid(unsafe_code)]

mod avc;
mod batch;
mod decision;
mod errors;
mod fork;
mod names;
mod policy;

use pyo3::prelude::*;

#[pymodule]
fn _seaccess(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("PolicyError", py.get_type::<errors::PolicyError>())?;
    m.add("ContextError", py.get_type::<errors::ContextError>())?;
    m.add(
        "UnknownNameError",
        py.get_type::<errors::UnknownNameError>(),
    )?;
    m.add_class::<policy::Policy>()?;
    m.add_class::<avc::Avc>()?;
    m.add_class::<decision::AvDecision>()?;
    m.add_class::<decision::Decision>()?;
    m.add_class::<decision::Permission>()?;
    m.add_class::<decision::Reason>()?;
    m.add("DEFAULT_CAPACITY", seaccess_avc::DEFAULT_CAPACITY)?;
    m.add(
        "KERNEL_SOCKET_CLASSES",
        pyo3::types::PyFrozenSet::new(py, seaccess_security::KERNEL_SOCKET_CLASSES)?,
    )?;
    fork::install(m)?;
    Ok(())
}
