//! The hooks, by kind of object: files and directories ([`fs`]), sockets ([`socket`]),
//! processes and credentials ([`process`]), System V IPC ([`ipc`]), keys ([`key`]) and binder
//! ([`binder`]). Each asks exactly what the kernel's hook of the same name asks
//! (security/selinux/hooks.c), cited in its comment.

pub mod binder;
pub mod fs;
pub mod ipc;
pub mod key;
pub mod process;
pub mod socket;
