//! Parameter overrides from a command line (`--set l2.size=8MiB`), applied to a loaded
//! [`Topology`] and checked like values from a file.
//!
//! A key is `SELECTOR.PARAM`, split at its last dot:
//! - `SELECTOR` names components: a registered type name (`amdgpu.l2`), a full path
//!   (`gpu.xcd[3].l2`), or the end of paths (`l2` is every component whose path ends in
//!   `.l2`, `cu` every `...cu[N]`); `*` matches any text and `[*]` any index
//!   (`gpu.xcd[*].cu[0]`). A selector that matches no component is an error.
//! - `PARAM` is a parameter of every matched component's type, converted and checked by
//!   its spec (kind, range, choices: `l2.policy=srrip`); or `type`, which swaps the
//!   components' type for another registered one.
//!
//! Each value set here remembers the override that set it ([`ValueOrigin::Set`]), so
//! that a later refusal of the value names the `--set`.
//!
//! A type swap keeps every parameter value the component had (registry defaults,
//! `[defaults]` blocks, templates and its own `params` all resolved already) and is an
//! error, naming them, if the new type does not declare one of them: values are never
//! dropped silently. Parameters only the new type declares take its defaults.

use std::fmt;
use std::str::FromStr;

use crate::params::{ParamValue, RawParam, ValueOrigin};
use crate::registry;
use crate::topology::Topology;

/// One `SELECTOR.PARAM=VALUE` override.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Which components (see the [module docs](self)).
    pub selector: String,
    /// The parameter or `type`.
    pub param: String,
    /// The value as written.
    pub value: String,
}

/// Why an override could not be applied. Every variant is fatal for the run that asked
/// for it; the topology is left unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverrideError {
    /// Not of the form `SELECTOR.PARAM=VALUE`.
    #[error("`{text}` is not SELECTOR.PARAM=VALUE (such as `l2.size=8MiB`)")]
    Syntax {
        /// What was given.
        text: String,
    },
    /// The selector matches no component.
    #[error("`{key}`: `{selector}` matches no component{hint}")]
    NoMatch {
        /// The whole key.
        key: String,
        /// The selector.
        selector: String,
        /// A sentence with the closest names, or empty.
        hint: String,
    },
    /// A matched component's type has no such parameter.
    #[error("`{key}`: `{path}` ({type_name}) has no parameter `{param}`; it has {known}")]
    UnknownParam {
        /// The whole key.
        key: String,
        /// The component.
        path: String,
        /// Its type.
        type_name: String,
        /// The parameter asked for.
        param: String,
        /// The parameters it has.
        known: String,
    },
    /// The value does not fit the parameter's kind.
    #[error("`{key}={value}`: {problem} (parameter `{param}` of {type_name})")]
    BadValue {
        /// The whole key.
        key: String,
        /// The value.
        value: String,
        /// The parameter.
        param: String,
        /// The type declaring it.
        type_name: String,
        /// What was expected.
        problem: String,
    },
    /// A type swap names a type that is not registered.
    #[error("`{key}`: no component type `{name}`{hint}")]
    UnknownType {
        /// The whole key.
        key: String,
        /// The type asked for.
        name: String,
        /// A sentence with the closest names, or empty.
        hint: String,
    },
    /// A type swap would drop parameter values the component has.
    #[error("`{key}`: {new_type} has no parameter{} {} that `{path}` sets; a type swap keeps every value and drops none", if params.len() > 1 { "s" } else { "" }, params.join(", "))]
    SwapDrops {
        /// The whole key.
        key: String,
        /// The component.
        path: String,
        /// The new type.
        new_type: String,
        /// The parameters the new type lacks.
        params: Vec<String>,
    },
}

impl FromStr for Override {
    type Err = OverrideError;

    fn from_str(text: &str) -> Result<Override, OverrideError> {
        let syntax = || OverrideError::Syntax { text: text.to_string() };
        let (key, value) = text.split_once('=').ok_or_else(syntax)?;
        let (selector, param) = key.trim().rsplit_once('.').ok_or_else(syntax)?;
        if selector.is_empty() || param.is_empty() || value.trim().is_empty() {
            return Err(syntax());
        }
        Ok(Override { selector: selector.to_string(), param: param.to_string(), value: value.trim().to_string() })
    }
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}={}", self.selector, self.param, self.value)
    }
}

impl Override {
    fn key(&self) -> String {
        format!("{}.{}", self.selector, self.param)
    }
}

/// Applies `overrides` in order to `t`; on an error `t` is unchanged.
pub fn apply(t: &mut Topology, overrides: &[Override]) -> Result<(), OverrideError> {
    let mut work = t.components.clone();
    for o in overrides {
        let key = o.key();
        let matched: Vec<usize> = (0..work.len())
            .filter(|&i| work[i].type_name == o.selector || selects(&o.selector, &work[i].path))
            .collect();
        if matched.is_empty() {
            let names = work.iter().map(|c| c.path.as_str()).chain(work.iter().map(|c| c.type_name.as_str()));
            return Err(OverrideError::NoMatch { key, selector: o.selector.clone(), hint: closest(&o.selector, names) });
        }
        for i in matched {
            let c = &mut work[i];
            let ty = registry::lookup(&c.type_name).ok_or_else(|| OverrideError::UnknownType {
                key: key.clone(),
                name: c.type_name.clone(),
                hint: String::new(),
            })?;
            if o.param == "type" {
                let name = o.value.clone();
                let new = registry::lookup(&name).ok_or_else(|| OverrideError::UnknownType {
                    key: key.clone(),
                    name: name.clone(),
                    hint: closest(&name, registry::component_types().iter().map(|t| t.name)),
                })?;
                let dropped: Vec<String> =
                    c.params.iter().filter(|(p, _)| new.param(p).is_none()).map(|(p, _)| p.to_string()).collect();
                if !dropped.is_empty() {
                    return Err(OverrideError::SwapDrops { key, path: c.path.clone(), new_type: name, params: dropped });
                }
                for spec in new.params {
                    if c.params.get(spec.name).is_none() {
                        if let Some(value) = spec.default_value() {
                            c.params.set(spec.name, value);
                        }
                    }
                }
                c.type_name = name;
                continue;
            }
            let spec = ty.param(&o.param).ok_or_else(|| OverrideError::UnknownParam {
                key: key.clone(),
                path: c.path.clone(),
                type_name: c.type_name.clone(),
                param: o.param.clone(),
                known: ty.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
            })?;
            let value: ParamValue = spec.convert(&RawParam::from_text(&o.value)).map_err(|problem| OverrideError::BadValue {
                key: key.clone(),
                value: o.value.clone(),
                param: o.param.clone(),
                type_name: c.type_name.clone(),
                problem,
            })?;
            c.params.set_from(o.param.clone(), value, Some(ValueOrigin::Set(o.to_string())));
        }
    }
    t.components = work;
    Ok(())
}

/// Whether `selector` names the component at `path`: the whole path or its end (after a
/// dot), with `*` for any text and an implicit `[*]` after a bare last name.
fn selects(selector: &str, path: &str) -> bool {
    let forms = [selector.to_string(), format!("*.{selector}")];
    let bare = !selector.ends_with(']');
    forms.iter().any(|f| glob(f, path) || (bare && glob(&format!("{f}[*]"), path)))
}

/// `pattern` matches all of `text`, `*` matching any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// ", did you mean ...?" with up to three names close to `wanted`, or nothing.
fn closest<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> String {
    let mut scored: Vec<(f64, &str)> = names.map(|n| (strsim::jaro_winkler(wanted, n), n)).filter(|(s, _)| *s > 0.8).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    let best: Vec<String> = scored.iter().take(3).map(|(_, n)| format!("`{n}`")).collect();
    if best.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", best.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_selectors() {
        assert!(glob("gpu.xcd[*].l2", "gpu.xcd[3].l2"));
        assert!(!glob("gpu.xcd[*].l2", "gpu.xcd[3].l2x"));
        assert!(selects("l2", "gpu.xcd[0].l2"));
        assert!(selects("cu", "gpu.xcd[0].cu[5]"));
        assert!(!selects("cu", "gpu.xcd[0].cup"));
        assert!(selects("xcd[1].cu[*]", "gpu.xcd[1].cu[7]"));
        assert!(!selects("xcd[1].cu[*]", "gpu.xcd[2].cu[7]"));
        assert!(selects("gpu", "gpu"));
    }

    #[test]
    fn parsing() {
        let o: Override = "gpu.xcd[0].l2.size=8MiB".parse().unwrap();
        assert_eq!((o.selector.as_str(), o.param.as_str(), o.value.as_str()), ("gpu.xcd[0].l2", "size", "8MiB"));
        assert!("size=8".parse::<Override>().is_err());
        assert!("l2.size".parse::<Override>().is_err());
        assert!("l2.size=".parse::<Override>().is_err());
    }
}
