"""The live testbed: real packets through tcplab-sim's link models.

`netns` makes the run's network namespaces and starts the emulator (`tcplab-emu`, Rust:
crates/tcplab-live) between them; `probe` sends and receives a constant-rate UDP probe;
`transport` runs a flow of tcplab's own transport (`tcplab-flow`) between them; `linux`
runs kernel TCP flows between them (`linux_settings`: their sysctls and routes); `udp`
runs a scenario's UDP constant-bit-rate flows between them; without
root `userns` holds the namespaces inside a user namespace.
See docs/live.md.
"""

from tcplab.live.netns import LiveError, Testbed, cleanup_stale, emulator_binary, live_support

__all__ = ["LiveError", "Testbed", "cleanup_stale", "emulator_binary", "live_support"]
