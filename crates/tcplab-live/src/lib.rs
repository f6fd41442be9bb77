//! tcplab-live: the live emulator. Real IPv4 packets read from a host's TUN device pass
//! through the link directions of tcplab-sim's own link model
//! ([`tcplab_sim::link_direction`]: queue discipline, serializer, loss model, delivery
//! trace, scheduled changes) along their route, and are written to the destination host's
//! TUN device at the model's arrival time. Linux only.
//!
//! One concept per module: [`clock`] (the only reader of the real clock: monotonic time,
//! sub-millisecond waits), [`histogram`] (fixed-size lateness histogram), [`ident`] (a
//! packet's identity from its headers, for the drop log), [`ecn`] (ECT and CE marking in
//! the IPv4 header), [`config`] (the one-link JSON config), [`plan`] (hosts, addresses,
//! link directions and routes: of a scenario's topology, from tcplab-sim's expansion, or of
//! the one-link config), [`tun`] (TUN devices opened inside network namespaces), [`driver`]
//! (the event loop), [`report`] (stats and drop log written at the end).

pub mod clock;
pub mod config;
pub mod driver;
pub mod ecn;
pub mod histogram;
pub mod ident;
pub mod plan;
pub mod report;
pub mod tun;
