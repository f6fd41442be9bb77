//! tcplab-sim: a packet-level discrete-event simulator for tcplab-core endpoints.
