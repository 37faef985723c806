//! [`Strategy`]: which partitioner to run, with its textual names.

use std::fmt;
use std::str::FromStr;

use super::PartitionError;

/// How components are distributed over partitions (worker threads).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Everything in partition 0 (`single`).
    Single,
    /// Component `i` goes to partition `i % n` (`round-robin`).
    RoundRobin,
    /// Contiguous blocks of component ids of about equal weight (`linear`).
    Linear,
    /// Whole subtrees of the component path hierarchy stay together, except that one
    /// heavier than a partition's share splits into its children; subtrees are spread
    /// over partitions balancing weight (`subtree` or `subtree:PREFIX`).
    Subtree {
        /// The path prefix whose children are the subtrees (`gpu.xcd` groups by
        /// `gpu.xcd[i]`). Empty: group by the first indexed level of every path.
        prefix: String,
    },
    /// The `partition` every component declares (`manual`).
    Manual,
    /// Multilevel graph partitioning that keeps low-latency links inside partitions
    /// (`mincut`).
    MinCut,
}

impl Strategy {
    /// The accepted names, for help text; `subtree` also takes `subtree:PREFIX`.
    pub const NAMES: [&'static str; 6] = ["single", "round-robin", "linear", "subtree", "manual", "mincut"];

    /// A one-line description of each strategy, in the order of [`Strategy::NAMES`]
    /// (with `subtree:PREFIX` shown explicitly), for help text.
    pub const HELP: [(&'static str, &'static str); 7] = [
        ("single", "everything in one partition"),
        ("round-robin", "component i in partition i % n"),
        ("linear", "contiguous blocks of component ids of equal weight"),
        ("subtree", "keep each first indexed path level (e.g. gpu.xcd[3]) together; split one heavier than a partition's share"),
        ("subtree:PREFIX", "keep each child subtree of PREFIX (e.g. subtree:gpu.xcd) together"),
        ("manual", "the `partition` each component declares"),
        ("mincut", "multilevel min-cut, keeping low-latency links inside partitions"),
    ];
}

impl FromStr for Strategy {
    type Err = PartitionError;

    fn from_str(text: &str) -> Result<Strategy, PartitionError> {
        let text = text.trim();
        let res = match text {
            "single" => Strategy::Single,
            "round-robin" => Strategy::RoundRobin,
            "linear" => Strategy::Linear,
            "subtree" => Strategy::Subtree { prefix: String::new() },
            "manual" => Strategy::Manual,
            "mincut" => Strategy::MinCut,
            _ => match text.strip_prefix("subtree:") {
                Some(prefix) if prefix.trim().is_empty() => return Err(PartitionError::EmptySubtreePrefix),
                Some(prefix) => Strategy::Subtree { prefix: prefix.trim().to_string() },
                None => {
                    return Err(PartitionError::UnknownStrategy {
                        name: text.to_string(),
                        expected: format!("{}, subtree:PREFIX", Strategy::NAMES.join(", ")),
                    })
                }
            },
        };
        Ok(res)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Single => f.write_str("single"),
            Strategy::RoundRobin => f.write_str("round-robin"),
            Strategy::Linear => f.write_str("linear"),
            Strategy::Subtree { prefix } if prefix.is_empty() => f.write_str("subtree"),
            Strategy::Subtree { prefix } => write!(f, "subtree:{prefix}"),
            Strategy::Manual => f.write_str("manual"),
            Strategy::MinCut => f.write_str("mincut"),
        }
    }
}
