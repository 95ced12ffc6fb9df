//! Policy unit tests: cases read from TOML and run against the security server.
