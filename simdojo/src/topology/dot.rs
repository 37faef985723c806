//! Graphviz export of a topology: components clustered by their path hierarchy, links
//! as edges labelled with their latency, fabrics as hub nodes.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::topology::pattern::split_segments;
use crate::topology::{LinkKind, Topology};

/// A cluster of the path hierarchy: components directly in it and sub-clusters.
#[derive(Default)]
struct Cluster {
    components: Vec<usize>,
    children: BTreeMap<String, Cluster>,
}

/// The topology as a Graphviz `digraph`. Components whose paths share a prefix
/// (`gpu.xcd[3]`) are drawn inside nested clusters named by that prefix; one-way links
/// are arrows, paired links double arrows, both labelled with the latency; each fabric
/// is a small hub node joined to its members.
pub fn to_dot(t: &Topology) -> String {
    let mut root = Cluster::default();
    for (i, c) in t.components.iter().enumerate() {
        let segs = split_segments(&c.path);
        let mut cluster = &mut root;
        for seg in &segs[..segs.len() - 1] {
            cluster = cluster.children.entry((*seg).to_string()).or_default();
        }
        cluster.components.push(i);
    }
    let mut out = String::from("digraph topology {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
    let mut counter = 0usize;
    write_cluster(t, &root, 1, &mut counter, &mut out);
    for l in &t.links {
        let (dir, arrow) = match l.kind {
            LinkKind::OneWay => ("forward", ""),
            LinkKind::Paired => ("both", ", arrowtail=normal"),
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "  c{} -> c{} [label=\"{}\", taillabel=\"{}\", headlabel=\"{}\", dir={dir}{arrow}, fontsize=8];",
            l.a.component,
            l.b.component,
            escape(&l.latency.to_string()),
            escape(&l.a.port),
            escape(&l.b.port),
        );
    }
    for (i, f) in t.fabrics.iter().enumerate() {
        let _ =
            writeln!(out, "  f{i} [shape=doublecircle, label=\"fabric {i}\\n{}\"];", escape(&f.latency.to_string()));
        for m in &f.members {
            let _ = writeln!(
                out,
                "  c{} -> f{i} [dir=both, arrowhead=none, arrowtail=none, taillabel=\"{}\", fontsize=8];",
                m.component,
                escape(&m.port)
            );
        }
    }
    out.push_str("}\n");
    out
}

fn write_cluster(t: &Topology, cluster: &Cluster, depth: usize, counter: &mut usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for &i in &cluster.components {
        let c = &t.components[i];
        let segs = split_segments(&c.path);
        let last = segs.last().copied().unwrap_or_default();
        let _ = writeln!(
            out,
            "{pad}c{i} [label=\"{}\\n{}\", tooltip=\"{}\"];",
            escape(last),
            escape(&c.type_name),
            escape(&c.path)
        );
    }
    for (name, child) in &cluster.children {
        *counter += 1;
        let _ = writeln!(out, "{pad}subgraph cluster_{} {{", *counter);
        let _ = writeln!(out, "{pad}  label=\"{}\";", escape(name));
        write_cluster(t, child, depth + 1, counter, out);
        let _ = writeln!(out, "{pad}}}");
    }
}

/// Escapes text for a double-quoted Graphviz string.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
