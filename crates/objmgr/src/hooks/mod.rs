//! The hooks, by kind of object: files and directories ([`fs`]), sockets ([`socket`]),
//! processes and credentials ([`process`]). Each asks exactly what the kernel's hook of the
//! same name asks (security/selinux/hooks.c), cited in its comment.

pub mod fs;
pub mod process;
pub mod socket;
