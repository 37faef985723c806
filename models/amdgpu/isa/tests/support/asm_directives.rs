//! Read the `.amdhsa_*` directives of each `.amdhsa_kernel` block of an assembly source.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmdhsaKernel {
    pub name: String,
    /// Directive name without the `.amdhsa_` prefix, and its integer value.
    pub values: BTreeMap<String, u64>,
}

impl AmdhsaKernel {
    /// The directive's value, or the assembler's default when the source omits it.
    pub fn value_or(&self, directive: &str, default: u64) -> u64 {
        self.values.get(directive).copied().unwrap_or(default)
    }
}

pub fn parse(source: &str) -> Vec<AmdhsaKernel> {
    let mut kernels = Vec::new();
    let mut current: Option<AmdhsaKernel> = None;
    for line in source.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if let Some(name) = line.strip_prefix(".amdhsa_kernel ") {
            current = Some(AmdhsaKernel { name: name.trim().to_string(), values: BTreeMap::new() });
        } else if line.starts_with(".end_amdhsa_kernel") {
            kernels.extend(current.take());
        } else if let (Some(kernel), Some(rest)) = (current.as_mut(), line.strip_prefix(".amdhsa_")) {
            let mut words = rest.split_whitespace();
            if let (Some(key), Some(value)) = (words.next(), words.next()) {
                let value = value.parse().unwrap_or_else(|_| panic!(".amdhsa_{key}: {value:?} is not an integer"));
                kernel.values.insert(key.to_string(), value);
            }
        }
    }
    kernels
}
