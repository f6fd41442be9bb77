//! The names the scenario format's enumerations accept and the defaults a schema fills in
//! (a link direction's queue and loss model, RED's and Gilbert-Elliott's optional
//! parameters, the dumbbell's access links, what a run traces), for schemas in other languages (the Python one reads them through
//! `_native.scenario_vocabulary_json` instead of keeping copies). The names are read from the
//! serde definitions themselves: deserializing a name no variant has fails with serde's
//! "unknown variant `x`, expected one of `a`, `b`, ..." and that list is the one source.

use super::{
    Dumbbell, Framing, LossSpec, QueueSpec, ReceiverStack, RedMode, Routing, SeriesMode, Stack,
    Topology, TraceSpec,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tcplab_core::cc::Growth;
use tcplab_core::config::SackStyle;
use tcplab_core::{RepeatedRto, RtoMode};

/// The variant names of `T` (`tag`: the field naming the variant of an internally tagged
/// enum, None for a plain string enum), in declaration order.
pub fn variant_names<T: DeserializeOwned>(tag: Option<&str>) -> Vec<String> {
    let probe = Value::from("\u{1}");
    let value = match tag {
        Some(tag) => serde_json::json!({ tag: probe }),
        None => probe,
    };
    let Err(e) = serde_json::from_value::<T>(value) else {
        unreachable!("no variant is named \\u{{1}}")
    };
    let message = e.to_string();
    let expected = message.split_once("expected").map_or("", |(_, rest)| rest);
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The optional fields of a `T` with their serde defaults: `T` deserialized from `required`
/// (its required fields) and serialized, without the `required` fields. The serde
/// definitions stay the one home of the defaults.
fn optional_defaults<T: DeserializeOwned + serde::Serialize>(required: Value) -> Value {
    let parsed: T = serde_json::from_value(required.clone()).expect("the required fields suffice");
    let mut out = serde_json::to_value(parsed).expect("a scenario type is JSON");
    if let (Some(out), Some(required)) = (out.as_object_mut(), required.as_object()) {
        for key in required.keys() {
            out.remove(key);
        }
    }
    out
}

/// `{field: [names]}` for every enumeration of the format a schema parses by name, and
/// `defaults`: a link direction's queue and loss model when the scenario gives none, the
/// optional parameters of RED (`red`) and Gilbert-Elliott (`gilbert_elliott`) with their
/// defaults, byte counting's limit when a scenario names the mode alone
/// (`byte_counting_limit`), the dumbbell's default access link (`access`: `min_rate` bit/s, `rate_factor`,
/// `buffer_packets`; the link itself is [`Dumbbell::default_access`]) and what a run traces
/// when the scenario says nothing (`trace`, [`TraceSpec::default`]).
pub fn vocabulary() -> Value {
    serde_json::json!({
        "topology": variant_names::<Topology>(Some("kind")),
        "queue": variant_names::<QueueSpec>(Some("discipline")),
        "red_mode": variant_names::<RedMode>(None),
        "loss_model": variant_names::<LossSpec>(Some("model")),
        "routing": variant_names::<Routing>(None),
        "series": variant_names::<SeriesMode>(None),
        "rto_mode": variant_names::<RtoMode>(None),
        "repeated_rto": variant_names::<RepeatedRto>(None),
        "sack_style": variant_names::<SackStyle>(None),
        "growth": variant_names::<Growth>(Some("mode")),
        "stack": variant_names::<Stack>(None),
        "framing": variant_names::<Framing>(None),
        "receiver": variant_names::<ReceiverStack>(None),
        "defaults": {
            "queue": QueueSpec::default(),
            "loss": LossSpec::default(),
            "red": optional_defaults::<super::RedSpec>(serde_json::json!({"min_th": 0.0, "max_th": 0.0})),
            "gilbert_elliott": optional_defaults::<LossSpec>(
                serde_json::json!({"model": "gilbert_elliott", "p_gb": 0.0, "p_bg": 0.0}),
            ),
            "access": {
                "min_rate": Dumbbell::DEFAULT_ACCESS_MIN_RATE,
                "rate_factor": Dumbbell::DEFAULT_ACCESS_RATE_FACTOR,
                "buffer_packets": Dumbbell::DEFAULT_ACCESS_BUFFER_PACKETS,
            },
            "parking_lot": {"packet_size": super::presets::DEFAULT_PACKET_SIZE},
            "byte_counting_limit": Growth::DEFAULT_BYTE_COUNTING_LIMIT,
            "trace": TraceSpec::default(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name read from serde's error is a variant (it deserializes past the tag: any
    /// error left is about the variant's own fields).
    fn names_are_variants<T: DeserializeOwned>(tag: Option<&str>) -> Vec<String> {
        let names = variant_names::<T>(tag);
        assert!(!names.is_empty());
        for name in &names {
            let value = match tag {
                Some(tag) => serde_json::json!({ tag: name }),
                None => Value::from(name.as_str()),
            };
            if let Err(e) = serde_json::from_value::<T>(value) {
                assert!(!e.to_string().contains("unknown variant"), "{name}: {e}");
            }
        }
        names
    }

    #[test]
    fn names_come_from_the_serde_definitions() {
        assert_eq!(
            names_are_variants::<QueueSpec>(Some("discipline")),
            ["drop_tail", "red"]
        );
        assert_eq!(names_are_variants::<Routing>(None), ["hops", "delay"]);
        assert_eq!(names_are_variants::<RedMode>(None), ["packets", "bytes"]);
        names_are_variants::<Topology>(Some("kind"));
        names_are_variants::<LossSpec>(Some("model"));
        names_are_variants::<SeriesMode>(None);
        names_are_variants::<RtoMode>(None);
        names_are_variants::<RepeatedRto>(None);
        names_are_variants::<SackStyle>(None);
        names_are_variants::<Growth>(Some("mode"));
        assert_eq!(
            names_are_variants::<Stack>(None),
            ["tcplab", "linux", "tcplab-tcp"]
        );
        assert_eq!(
            names_are_variants::<ReceiverStack>(None),
            ["stack", "tcplab"]
        );
        assert_eq!(names_are_variants::<Framing>(None), ["tcplab", "eth"]);
        let v = vocabulary();
        assert_eq!(
            v["defaults"]["queue"],
            serde_json::json!({"discipline": "drop_tail"})
        );
        assert_eq!(v["defaults"]["loss"], serde_json::json!({"model": "none"}));
    }

    #[test]
    fn optional_parameters_come_with_their_serde_defaults() {
        let v = vocabulary();
        let red = &v["defaults"]["red"];
        assert_eq!(
            serde_json::json!({"mode": "byte_counting", "limit": v["defaults"]["byte_counting_limit"]}),
            serde_json::to_value(Growth::default()).unwrap()
        );
        assert_eq!(red["max_p"], 0.1);
        assert_eq!(red["w_q"], 0.002);
        assert_eq!(red["wait"], true);
        assert_eq!(red["mean_packet_size"], 1500);
        assert!(red.get("min_th").is_none() && red.get("max_th").is_none());
        assert_eq!(
            v["defaults"]["gilbert_elliott"],
            serde_json::json!({"loss_good": 0.0, "loss_bad": 1.0})
        );
        let trace: TraceSpec = serde_json::from_value(v["defaults"]["trace"].clone()).unwrap();
        assert_eq!(trace, TraceSpec::default());
        let access = Dumbbell::default_access(1_000_000);
        assert_eq!(
            access.forward.rate,
            v["defaults"]["access"]["min_rate"].as_u64().unwrap()
        );
        assert_eq!(
            Dumbbell::default_access(1_000_000_000).reverse.rate,
            10_000_000_000
        );
        assert_eq!(Dumbbell::default_access(u64::MAX).forward.rate, u64::MAX);
        assert_eq!(
            access.forward.buffer,
            super::super::Buffer::Packets(Dumbbell::DEFAULT_ACCESS_BUFFER_PACKETS)
        );
    }
}
