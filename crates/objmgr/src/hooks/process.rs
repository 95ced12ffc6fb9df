//! Process hooks: exec (the new credential), signals, ptrace-like access, capabilities.
