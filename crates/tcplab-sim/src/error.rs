//! The error of a scenario that cannot run: one line naming the field, the value and what is
//! allowed (several problems joined by "; "), and each [`Problem`] structured.
//! [`crate::validate`] produces them; the Python bindings turn a [`SimError`] into a
//! `ValueError` and hand the problems to the Python schema, which words them in user units.

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// Why a scenario cannot run; the message names the field, the value and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}

/// One problem of a scenario, structured for readers that word messages their own way (the
/// Python package shows values in user units): the field's path (`flows[1].start`), the
/// rule it breaks (e.g. [`Problem::AT_MOST_DURATION`]; "" for problems not coded yet), the
/// offending value and the bound it is held to (JSON, canonical units), and the one-line
/// message (`path = value: what is allowed`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    pub path: String,
    pub rule: &'static str,
    pub value: Option<Value>,
    pub limit: Option<Value>,
    pub message: String,
}

impl Problem {
    /// A time (ns) later than the run's duration (`limit`, ns).
    pub const AT_MOST_DURATION: &'static str = "at_most_duration";
    /// A stop time (ns) not later than the start (`limit`, ns).
    pub const AFTER_START: &'static str = "after_start";
    /// A node name that names no node (`limit`: the nodes).
    pub const UNKNOWN_NODE: &'static str = "unknown_node";
    /// A node name given before (`limit`: the index of the first node of that name).
    pub const DUPLICATE_NODE: &'static str = "duplicate_node";
    /// A link from a node to itself.
    pub const SELF_LINK: &'static str = "self_link";
    /// A WLAN segment's access point that is a host.
    pub const AP_NOT_ROUTER: &'static str = "ap_not_router";
    /// A static route whose destination is a router.
    pub const ROUTE_TO_ROUTER: &'static str = "route_to_router";
    /// A node not linked to the one it should neighbour (`limit`).
    pub const NOT_NEIGHBOUR: &'static str = "not_neighbour";
    /// A time longer than [`crate::validate::MAX_TIME`] (`limit`, ns).
    pub const TIME_LIMIT: &'static str = "time_limit";
    /// A byte buffer smaller than the smallest full-sized packet of the flows (`limit`, bytes).
    pub const BUFFER_BELOW_PACKET: &'static str = "buffer_below_packet";
    /// A flow name given before (`limit`: the path of the flow that has it).
    pub const DUPLICATE_FLOW_NAME: &'static str = "duplicate_flow_name";
    /// A flow endpoint that is no host (`limit`: the first hosts, then "..." if more).
    pub const NOT_A_HOST: &'static str = "not_a_host";
    /// A flow whose dst is its src (`limit`: the src).
    pub const SAME_HOST: &'static str = "same_host";
    /// A pcap selector naming no link (`limit`: the first links, then "..." if more).
    pub const PCAP_LINK: &'static str = "pcap_link";
    /// A pcap selector with a direction other than forward or reverse.
    pub const PCAP_DIRECTION: &'static str = "pcap_direction";
    /// A flow's route with fewer than 2 nodes (`value`: how many).
    pub const ROUTE_TOO_SHORT: &'static str = "route_too_short";
    /// A node of a route that does not exist.
    pub const ROUTE_UNKNOWN_NODE: &'static str = "route_unknown_node";
    /// A route that does not start at the flow's src (`limit`).
    pub const ROUTE_SRC: &'static str = "route_src";
    /// A route that does not end at the flow's dst (`limit`).
    pub const ROUTE_DST: &'static str = "route_dst";
    /// A node a route visits twice.
    pub const ROUTE_LOOP: &'static str = "route_loop";
    /// A host in the middle of a route.
    pub const ROUTE_HOST_INSIDE: &'static str = "route_host_inside";
    /// A node of a route not linked to the one before it (`limit`).
    pub const ROUTE_NOT_LINKED: &'static str = "route_not_linked";

    /// A number below `limit` (RED's `min_th` >= 0, `mean_packet_size` >= 1).
    pub const AT_LEAST: &'static str = "at_least";
    /// A number not above `limit` (a WLAN channel's path-loss exponent, a station's distance).
    pub const ABOVE: &'static str = "above";
    /// A link direction's buffer of 0 (`limit`: its unit, "packet" or "byte").
    pub const EMPTY_BUFFER: &'static str = "empty_buffer";
    /// RED's `max_th` not above `min_th` (`limit`).
    pub const MAX_TH_ABOVE_MIN_TH: &'static str = "max_th_above_min_th";
    /// RED's `w_q` outside (0, 1] (the weight of the newest sample in the average).
    pub const WEIGHT: &'static str = "weight";
    /// A loss interval `[start, end]` (ns) with end <= start.
    pub const START_BEFORE_END: &'static str = "start_before_end";
    /// A `trace.interval` of 0 while series are recorded (`limit`: 1 ns).
    pub const POSITIVE_INTERVAL: &'static str = "positive_interval";
    /// A line of a time-trace file that is neither one time nor a `start end` pair (`value`:
    /// how many values it has).
    pub const TIME_OR_INTERVAL: &'static str = "time_or_interval";
    /// A schedule change not later than the one before it (`limit`: [its index, its time ns]).
    pub const AFTER_PREVIOUS_CHANGE: &'static str = "after_previous_change";
    /// A schedule change that gives no rate, delay, buffer or loss.
    pub const CHANGES_NOTHING: &'static str = "changes_nothing";
    /// A value outside `limit` = `[lo, hi]`.
    pub const RANGE: &'static str = "range";
    /// A `report_delay` (ns) without `report_losses` (a link direction's or a WLAN segment's).
    pub const REPORT_DELAY_NEEDS_LOSSES: &'static str = "report_delay_needs_losses";
    /// A WLAN segment name given before (`limit`: the index of the first segment of that name).
    pub const DUPLICATE_WLAN_NAME: &'static str = "duplicate_wlan_name";
    /// A WLAN segment without stations.
    pub const NO_STATIONS: &'static str = "no_stations";
    /// A station that is no host (`limit`: the first hosts, then "..." if more).
    pub const STATION_NOT_A_HOST: &'static str = "station_not_a_host";
    /// A station listed twice in its segment (`limit`: the index of its first entry).
    pub const DUPLICATE_STATION: &'static str = "duplicate_station";
    /// A station of another segment (`limit`: that segment's name).
    pub const STATION_OF_OTHER_SEGMENT: &'static str = "station_of_other_segment";
    /// A node name a preset gives another node (`limit`: the preset's names).
    pub const RESERVED_NAME: &'static str = "reserved_name";
    /// A contention window maximum below the minimum (`limit`: cw_min).
    pub const CW_MAX_BELOW_MIN: &'static str = "cw_max_below_min";
    /// A station given both a distance (`limit`, metres) and a preset (`value`).
    pub const DISTANCE_AND_PRESET: &'static str = "distance_and_preset";
    /// A station with no distance and no preset, its segment none either.
    pub const NO_PLACEMENT: &'static str = "no_placement";
    /// A station placed by preset (`value`) on a channel without shadowing (`limit`: shadowing_db).
    pub const PRESET_NEEDS_SHADOWING: &'static str = "preset_needs_shadowing";

    /// A flow in the ETH framing whose mss, byte count or index the framing cannot carry
    /// (`limit`: the packet size, or the number of flows).
    pub const ETH_FRAMING: &'static str = "eth_framing";

    /// `path = value: expected`, under `rule`, held to `limit`.
    pub fn new(
        path: String,
        rule: &'static str,
        value: impl Into<Value>,
        limit: impl Into<Value>,
        expected: &str,
    ) -> Self {
        let value = value.into();
        Problem {
            message: format!("{path} = {value}: {expected}"),
            path,
            rule,
            value: Some(value),
            limit: Some(limit.into()),
        }
    }

    /// A problem under `rule` with its own `message`.
    pub fn worded(
        path: String,
        rule: &'static str,
        value: impl Into<Value>,
        limit: impl Into<Value>,
        message: String,
    ) -> Self {
        Problem {
            path,
            rule,
            value: Some(value.into()),
            limit: Some(limit.into()),
            message,
        }
    }
}

/// The one-line message (for callers that collect messages only).
impl From<Problem> for String {
    fn from(p: Problem) -> String {
        p.message
    }
}

/// A problem known by its message only.
impl From<String> for Problem {
    fn from(message: String) -> Self {
        Problem {
            path: String::new(),
            rule: "",
            value: None,
            limit: None,
            message,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
