//! Python bindings (module `tcplab._native`).
