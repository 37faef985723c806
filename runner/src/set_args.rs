//! `--set SELECTOR.PARAM=VALUE` (repeatable) on the commands that build a machine from a
//! topology: parameter studies without editing files. The keys and what they select
//! are `simdojo::topology::overrides`; a bad key or value is an error naming it.

use clap::Args;
use simdojo::topology::overrides::Override;

/// The `--set` flags of a command.
#[derive(Args, Debug, Clone, Default)]
pub struct SetArgs {
    /// Override a topology parameter: `SELECTOR.PARAM=VALUE`, repeatable, applied in
    /// order. SELECTOR is a component type (`amdgpu.l2`), a path (`gpu.xcd[0].l2`)
    /// or the end of paths (`l2`, `cu`; `*` and `[*]` match anything); PARAM is one of
    /// the type's parameters (`dojo plugins TYPE`; choices too: `l2.policy=srrip`,
    /// `cu.mode=timing`) or `type` (swap the type, keeping every value). Examples:
    /// `--set l2.size=8MiB`, `--set cu.mode=timing`, `--set hbm.channels_per_stack=8`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<Override>,
}
