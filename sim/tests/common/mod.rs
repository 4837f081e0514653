//! Helpers shared by the simulator's integration tests.

use superpass_trace::events::{Events, SliceKind};

/// The names of every slice a decoded trace begins, in trace order.
pub fn begun_slices(ev: &Events) -> Vec<String> {
    ev.slices
        .iter()
        .filter_map(|s| match s.kind {
            SliceKind::Begin { name, .. } => Some(ev.strings.get(name).to_string()),
            _ => None,
        })
        .collect()
}
