//! sesearch's rule queries over a policy's rules.
