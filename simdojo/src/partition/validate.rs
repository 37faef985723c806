//! Checks on a topology that every strategy relies on: weights usable for balancing and
//! cut costs, and links and fabrics that name existing components.

use super::PartitionError;
use crate::ids::{FabricId, LinkId};
use crate::topology::Topology;

fn usable_weight(w: f64) -> bool {
    w.is_finite() && w >= 0.0
}

/// Fails on the first bad component weight, link or fabric.
pub(super) fn check_topology(t: &Topology) -> Result<(), PartitionError> {
    if t.components.is_empty() {
        return Err(PartitionError::EmptyTopology);
    }
    let n_components = t.components.len();
    for c in &t.components {
        if !usable_weight(c.weight) {
            return Err(PartitionError::BadComponentWeight { path: c.path.clone(), weight: c.weight });
        }
    }
    for (idx, link) in t.links.iter().enumerate() {
        let link_id = LinkId::from_index(idx);
        for end in [&link.a, &link.b] {
            if end.component.index() >= n_components {
                return Err(PartitionError::LinkEndpointOutOfRange {
                    link: link_id,
                    component: end.component,
                    n_components,
                });
            }
        }
        if !usable_weight(link.weight) {
            return Err(PartitionError::BadLinkWeight {
                link: link_id,
                from: t.component(link.a.component).path.clone(),
                to: t.component(link.b.component).path.clone(),
                weight: link.weight,
            });
        }
    }
    for (idx, fabric) in t.fabrics.iter().enumerate() {
        let fabric_id = FabricId::from_index(idx);
        for member in &fabric.members {
            if member.component.index() >= n_components {
                return Err(PartitionError::FabricMemberOutOfRange {
                    fabric: fabric_id,
                    component: member.component,
                    n_components,
                });
            }
        }
        if !usable_weight(fabric.weight) {
            let first_member =
                fabric.members.first().map_or_else(|| "<none>".to_string(), |m| t.component(m.component).path.clone());
            return Err(PartitionError::BadFabricWeight { fabric: fabric_id, first_member, weight: fabric.weight });
        }
    }
    Ok(())
}

/// The balancing weight of every component: its declared weight, or 1 for all of them
/// when every declared weight is 0 (nothing to balance otherwise).
pub(super) fn balance_weights(t: &Topology) -> Vec<f64> {
    if t.components.iter().all(|c| c.weight == 0.0) {
        vec![1.0; t.components.len()]
    } else {
        t.components.iter().map(|c| c.weight).collect()
    }
}
