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
//! the one-link config), [`tun`] (TUN devices opened inside network namespaces), [`device`]
//! (a host's device: a TUN in its namespace, or a socket a user-space endpoint holds), [`driver`]
//! (the event loop), [`report`] (stats and drop log written at the end).
//!
//! tcplab's transport (binary `tcplab-flow`): [`wire`] (core segments as UDP payloads, the
//! tcplab and ETH framings), [`stream`] (the application's byte pattern and its check),
//! [`udp`] (the socket), [`flow_config`] (an endpoint's config: a flow of a canonical
//! scenario), [`endpoint`] (clock resolution, fact log), [`flow_sender`] and
//! [`flow_receiver`] (the endpoints' event loops). UDP constant-bit-rate flows (also
//! `tcplab-flow`): [`cbr_wire`] (the datagram's header), [`cbr_config`] (an end's config: a
//! UDP flow of a canonical scenario), [`cbr_sender`] and [`cbr_receiver`]. [`process`]: the
//! binaries' signal handling and scheduling. tcplab's sender speaking real TCP on a host
//! attached by a socket ([`device`]): [`tcp_sender`] (`tcplab-flow tcp-send`, docs/real-tcp.md);
//! its receiver for a Linux sender: [`tcp_receiver`] (`tcplab-flow tcp-recv`).

pub mod cbr_config;
pub mod cbr_receiver;
pub mod cbr_sender;
pub mod cbr_wire;
pub mod clock;
pub mod config;
pub mod device;
pub mod driver;
pub mod ecn;
pub mod endpoint;
pub mod flow_config;
pub mod flow_receiver;
pub mod flow_sender;
pub mod histogram;
pub mod ident;
pub mod plan;
pub mod process;
pub mod report;
pub mod stalls;
pub mod stream;
pub mod tcp_receiver;
pub mod tcp_sender;
pub mod tcp_sends;
pub mod tun;
pub mod udp;
pub mod unmodelled;
pub mod vnet;
pub mod wire;
