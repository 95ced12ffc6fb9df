//! Socket hooks: create, bind, connect, listen, accept, send and receive, unix stream connect
//! and datagram send, socketpair, peer SIDs.
