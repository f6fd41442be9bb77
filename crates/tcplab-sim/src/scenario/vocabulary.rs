//! The names the scenario format's enumerations accept and the defaults of a link direction,
//! for schemas in other languages (the Python one reads them through
//! `_native.scenario_vocabulary_json` instead of keeping copies). The names are read from the
//! serde definitions themselves: deserializing a name no variant has fails with serde's
//! "unknown variant `x`, expected one of `a`, `b`, ..." and that list is the one source.

use super::{Framing, LossSpec, QueueSpec, RedMode, Routing, SeriesMode, Stack, Topology};
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

/// `{field: [names]}` for every enumeration of the format a schema parses by name, and
/// `defaults`: a link direction's queue and loss model when the scenario gives none.
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
        "defaults": {
            "queue": QueueSpec::default(),
            "loss": LossSpec::default(),
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
        assert_eq!(names_are_variants::<Stack>(None), ["tcplab", "linux"]);
        assert_eq!(names_are_variants::<Framing>(None), ["tcplab", "eth"]);
        let v = vocabulary();
        assert_eq!(
            v["defaults"]["queue"],
            serde_json::json!({"discipline": "drop_tail"})
        );
        assert_eq!(v["defaults"]["loss"], serde_json::json!({"model": "none"}));
    }
}
