//! The `NT_AMDGPU_METADATA` note: MessagePack kernel metadata of code object v3 and later.
//!
//! The note holds one map with `amdhsa.version` (`[major, minor]`), `amdhsa.target`
//! (e.g. `amdgcn-amd-amdhsa--gfx942:sramecc+`) and `amdhsa.kernels`, one map per kernel.
//! Only the fields a loader or executor needs are decoded; unknown keys are ignored,
//! unknown *values* of enumerated fields are errors.

use rmpv::Value;

use super::CodeObjectError;

/// Note type of the AMDGPU metadata note (owner "AMDGPU").
pub const NT_AMDGPU_METADATA: u32 = 32;

/// How a kernel argument is passed, from `.value_kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgValueKind {
    /// `by_value`: the bytes of the value.
    ByValue,
    /// `global_buffer`: a global pointer.
    GlobalBuffer,
    /// `dynamic_shared_pointer`: an LDS pointer to dynamically allocated LDS.
    DynamicSharedPointer,
    /// `sampler`: an image sampler handle.
    Sampler,
    /// `image`: an image handle.
    Image,
    /// `pipe`: an OpenCL pipe.
    Pipe,
    /// `queue`: an OpenCL device queue.
    Queue,
    /// `hidden_global_offset_x`: OpenCL global offset X.
    HiddenGlobalOffsetX,
    /// `hidden_global_offset_y`.
    HiddenGlobalOffsetY,
    /// `hidden_global_offset_z`.
    HiddenGlobalOffsetZ,
    /// `hidden_none`: reserved padding; the runtime writes nothing.
    HiddenNone,
    /// `hidden_printf_buffer`: pointer to the printf buffer.
    HiddenPrintfBuffer,
    /// `hidden_hostcall_buffer`: pointer to the hostcall buffer.
    HiddenHostcallBuffer,
    /// `hidden_default_queue`: OpenCL default device queue.
    HiddenDefaultQueue,
    /// `hidden_completion_action`: OpenCL enqueue completion action.
    HiddenCompletionAction,
    /// `hidden_multigrid_sync_arg`: multi-grid synchronisation pointer.
    HiddenMultigridSyncArg,
    /// `hidden_heap_v1`: device malloc heap pointer.
    HiddenHeapV1,
    /// `hidden_block_count_x`: number of work-groups in X (v5+).
    HiddenBlockCountX,
    /// `hidden_block_count_y`.
    HiddenBlockCountY,
    /// `hidden_block_count_z`.
    HiddenBlockCountZ,
    /// `hidden_group_size_x`: work-group size X (v5+).
    HiddenGroupSizeX,
    /// `hidden_group_size_y`.
    HiddenGroupSizeY,
    /// `hidden_group_size_z`.
    HiddenGroupSizeZ,
    /// `hidden_remainder_x`: size of the partial last work-group in X (v5+).
    HiddenRemainderX,
    /// `hidden_remainder_y`.
    HiddenRemainderY,
    /// `hidden_remainder_z`.
    HiddenRemainderZ,
    /// `hidden_grid_dims`: dispatch dimensionality, 1..=3 (v5+).
    HiddenGridDims,
    /// `hidden_private_base`: private aperture base (GFX8 only users).
    HiddenPrivateBase,
    /// `hidden_shared_base`: shared aperture base (GFX8 only users).
    HiddenSharedBase,
    /// `hidden_queue_ptr`: pointer to the AQL queue.
    HiddenQueuePtr,
    /// `hidden_dynamic_lds_size`: bytes of dynamic LDS of the dispatch.
    HiddenDynamicLdsSize,
}

/// Every value kind with its `.value_kind` spelling.
const VALUE_KIND_NAMES: [(ArgValueKind, &str); 31] = {
    use ArgValueKind::*;
    [
        (ByValue, "by_value"),
        (GlobalBuffer, "global_buffer"),
        (DynamicSharedPointer, "dynamic_shared_pointer"),
        (Sampler, "sampler"),
        (Image, "image"),
        (Pipe, "pipe"),
        (Queue, "queue"),
        (HiddenGlobalOffsetX, "hidden_global_offset_x"),
        (HiddenGlobalOffsetY, "hidden_global_offset_y"),
        (HiddenGlobalOffsetZ, "hidden_global_offset_z"),
        (HiddenNone, "hidden_none"),
        (HiddenPrintfBuffer, "hidden_printf_buffer"),
        (HiddenHostcallBuffer, "hidden_hostcall_buffer"),
        (HiddenDefaultQueue, "hidden_default_queue"),
        (HiddenCompletionAction, "hidden_completion_action"),
        (HiddenMultigridSyncArg, "hidden_multigrid_sync_arg"),
        (HiddenHeapV1, "hidden_heap_v1"),
        (HiddenBlockCountX, "hidden_block_count_x"),
        (HiddenBlockCountY, "hidden_block_count_y"),
        (HiddenBlockCountZ, "hidden_block_count_z"),
        (HiddenGroupSizeX, "hidden_group_size_x"),
        (HiddenGroupSizeY, "hidden_group_size_y"),
        (HiddenGroupSizeZ, "hidden_group_size_z"),
        (HiddenRemainderX, "hidden_remainder_x"),
        (HiddenRemainderY, "hidden_remainder_y"),
        (HiddenRemainderZ, "hidden_remainder_z"),
        (HiddenGridDims, "hidden_grid_dims"),
        (HiddenPrivateBase, "hidden_private_base"),
        (HiddenSharedBase, "hidden_shared_base"),
        (HiddenQueuePtr, "hidden_queue_ptr"),
        (HiddenDynamicLdsSize, "hidden_dynamic_lds_size"),
    ]
};

impl ArgValueKind {
    /// Parse the `.value_kind` string.
    pub fn from_name(name: &str) -> Option<ArgValueKind> {
        VALUE_KIND_NAMES.iter().find(|(_, spelling)| *spelling == name).map(|(kind, _)| *kind)
    }

    /// The `.value_kind` spelling of this kind.
    pub fn name(self) -> &'static str {
        VALUE_KIND_NAMES
            .iter()
            .find(|(kind, _)| *kind == self)
            .map(|(_, spelling)| *spelling)
            // The table lists every variant; the unit test `every_value_kind_has_a_name` checks it.
            .unwrap_or("unknown")
    }

    /// Every value kind, in metadata documentation order.
    pub fn all() -> impl Iterator<Item = ArgValueKind> {
        VALUE_KIND_NAMES.iter().map(|(kind, _)| *kind)
    }

    /// Whether the runtime, not the caller, supplies this argument.
    pub fn is_hidden(self) -> bool {
        !matches!(
            self,
            ArgValueKind::ByValue
                | ArgValueKind::GlobalBuffer
                | ArgValueKind::DynamicSharedPointer
                | ArgValueKind::Sampler
                | ArgValueKind::Image
                | ArgValueKind::Pipe
                | ArgValueKind::Queue
        )
    }
}

/// The address space a pointer argument points into, from `.address_space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `private` (scratch).
    Private,
    /// `global`.
    Global,
    /// `constant`.
    Constant,
    /// `local` (LDS).
    Local,
    /// `generic` (flat).
    Generic,
    /// `region` (GDS).
    Region,
}

impl AddressSpace {
    fn from_name(name: &str) -> Option<AddressSpace> {
        Some(match name {
            "private" => AddressSpace::Private,
            "global" => AddressSpace::Global,
            "constant" => AddressSpace::Constant,
            "local" => AddressSpace::Local,
            "generic" => AddressSpace::Generic,
            "region" => AddressSpace::Region,
            _ => return None,
        })
    }
}

/// One kernel argument's place in the kernarg segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// `.name`, when the compiler recorded it.
    pub name: Option<String>,
    /// `.offset`: byte offset in the kernarg segment.
    pub offset: u32,
    /// `.size`: bytes.
    pub size: u32,
    /// `.value_kind`.
    pub value_kind: ArgValueKind,
    /// `.address_space` of pointer arguments.
    pub address_space: Option<AddressSpace>,
}

/// The metadata of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMetadata {
    /// `.name`: the source-level kernel name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol (`NAME.kd`).
    pub symbol: String,
    /// `.args`, in kernarg order.
    pub args: Vec<KernelArg>,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: u32,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: u32,
    /// `.group_segment_fixed_size`.
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`.
    pub private_segment_fixed_size: u32,
    /// `.wavefront_size`.
    pub wavefront_size: u32,
    /// `.sgpr_count`: SGPRs used, VCC/flat scratch/xnack included.
    pub sgpr_count: u32,
    /// `.vgpr_count`: architected VGPRs used.
    pub vgpr_count: u32,
    /// `.agpr_count`: AccVGPRs used (0 when absent).
    pub agpr_count: u32,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: u32,
    /// `.sgpr_spill_count` (0 when absent).
    pub sgpr_spill_count: u32,
    /// `.vgpr_spill_count` (0 when absent).
    pub vgpr_spill_count: u32,
    /// `.uses_dynamic_stack` (false when absent).
    pub uses_dynamic_stack: bool,
    /// `.reqd_workgroup_size` (OpenCL `reqd_work_group_size`), when present.
    pub reqd_workgroup_size: Option<[u32; 3]>,
}

/// The whole metadata note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version` as (major, minor).
    pub version: (u32, u32),
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx942`.
    pub target: Option<String>,
    /// `amdhsa.kernels`.
    pub kernels: Vec<KernelMetadata>,
}

/// A map key lookup helper that knows where it is, for error messages.
struct Fields<'a> {
    entries: &'a [(Value, Value)],
    location: String,
}

impl<'a> Fields<'a> {
    fn new(value: &'a Value, location: String, field: &'static str) -> Result<Fields<'a>, CodeObjectError> {
        match value {
            Value::Map(entries) => Ok(Fields { entries, location }),
            other => Err(CodeObjectError::MetadataField {
                location,
                field,
                problem: format!("expected a map, found {}", describe(other)),
            }),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.entries.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
    }

    fn error(&self, field: &'static str, problem: String) -> CodeObjectError {
        CodeObjectError::MetadataField { location: self.location.clone(), field, problem }
    }

    fn required(&self, field: &'static str) -> Result<&'a Value, CodeObjectError> {
        self.get(field).ok_or_else(|| self.error(field, "missing".to_string()))
    }

    fn string(&self, field: &'static str) -> Result<String, CodeObjectError> {
        let value = self.required(field)?;
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| self.error(field, format!("expected a string, found {}", describe(value))))
    }

    fn opt_string(&self, field: &'static str) -> Result<Option<String>, CodeObjectError> {
        match self.get(field) {
            None => Ok(None),
            Some(value) => value
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| self.error(field, format!("expected a string, found {}", describe(value)))),
        }
    }

    fn u32_of(&self, field: &'static str, value: &Value) -> Result<u32, CodeObjectError> {
        value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| self.error(field, format!("expected a 32-bit unsigned integer, found {}", describe(value))))
    }

    fn u32(&self, field: &'static str) -> Result<u32, CodeObjectError> {
        let value = self.required(field)?;
        self.u32_of(field, value)
    }

    fn u32_or_zero(&self, field: &'static str) -> Result<u32, CodeObjectError> {
        match self.get(field) {
            None => Ok(0),
            Some(value) => self.u32_of(field, value),
        }
    }

    fn opt_dims(&self, field: &'static str) -> Result<Option<[u32; 3]>, CodeObjectError> {
        let Some(value) = self.get(field) else { return Ok(None) };
        match value.as_array().map(Vec::as_slice) {
            Some([x, y, z]) => Ok(Some([self.u32_of(field, x)?, self.u32_of(field, y)?, self.u32_of(field, z)?])),
            _ => Err(self.error(field, format!("expected [x, y, z], found {}", describe(value)))),
        }
    }

    fn bool_or_false(&self, field: &'static str) -> Result<bool, CodeObjectError> {
        match self.get(field) {
            None => Ok(false),
            Some(value) => value
                .as_bool()
                .ok_or_else(|| self.error(field, format!("expected a boolean, found {}", describe(value)))),
        }
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "a boolean",
        Value::Integer(_) => "an integer",
        Value::F32(_) | Value::F64(_) => "a float",
        Value::String(_) => "a string",
        Value::Binary(_) => "binary data",
        Value::Array(_) => "an array",
        Value::Map(_) => "a map",
        Value::Ext(..) => "an extension value",
    }
}

impl Metadata {
    /// Decode the note's descriptor bytes. `note_offset` (the file offset of the note's
    /// section) only serves error messages.
    pub fn decode(bytes: &[u8], note_offset: u64) -> Result<Metadata, CodeObjectError> {
        let mut reader = bytes;
        let root = rmpv::decode::read_value(&mut reader)
            .map_err(|err| CodeObjectError::MetadataMsgpack { note_offset, detail: err.to_string() })?;
        let fields = Fields::new(&root, "root".to_string(), "root")?;

        let version_value = fields.required("amdhsa.version")?;
        let version = match version_value.as_array().map(Vec::as_slice) {
            Some([major, minor]) => (fields.u32_of("amdhsa.version", major)?, fields.u32_of("amdhsa.version", minor)?),
            _ => {
                return Err(fields.error(
                    "amdhsa.version",
                    format!("expected [major, minor], found {}", describe(version_value)),
                ))
            }
        };
        let target = fields.opt_string("amdhsa.target")?;

        let kernels = match fields.get("amdhsa.kernels") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(index, item)| decode_kernel(item, index))
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(fields.error("amdhsa.kernels", format!("expected an array, found {}", describe(other))))
            }
        };
        Ok(Metadata { version, target, kernels })
    }
}

fn decode_kernel(value: &Value, index: usize) -> Result<KernelMetadata, CodeObjectError> {
    let fields = Fields::new(value, format!("amdhsa.kernels[{index}]"), "amdhsa.kernels")?;
    let name = fields.string(".name")?;
    let fields = Fields { entries: fields.entries, location: format!("amdhsa.kernels[{index}] ({name})") };
    let args = match fields.get(".args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(arg_index, item)| decode_arg(item, &format!("{}.args[{arg_index}]", fields.location)))
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => return Err(fields.error(".args", format!("expected an array, found {}", describe(other)))),
    };
    Ok(KernelMetadata {
        symbol: fields.string(".symbol")?,
        args,
        kernarg_segment_size: fields.u32(".kernarg_segment_size")?,
        kernarg_segment_align: fields.u32(".kernarg_segment_align")?,
        group_segment_fixed_size: fields.u32(".group_segment_fixed_size")?,
        private_segment_fixed_size: fields.u32(".private_segment_fixed_size")?,
        wavefront_size: fields.u32(".wavefront_size")?,
        sgpr_count: fields.u32(".sgpr_count")?,
        vgpr_count: fields.u32(".vgpr_count")?,
        agpr_count: fields.u32_or_zero(".agpr_count")?,
        max_flat_workgroup_size: fields.u32(".max_flat_workgroup_size")?,
        sgpr_spill_count: fields.u32_or_zero(".sgpr_spill_count")?,
        vgpr_spill_count: fields.u32_or_zero(".vgpr_spill_count")?,
        uses_dynamic_stack: fields.bool_or_false(".uses_dynamic_stack")?,
        reqd_workgroup_size: fields.opt_dims(".reqd_workgroup_size")?,
        name,
    })
}

fn decode_arg(value: &Value, location: &str) -> Result<KernelArg, CodeObjectError> {
    let fields = Fields::new(value, location.to_string(), ".args")?;
    let kind_name = fields.string(".value_kind")?;
    let value_kind = ArgValueKind::from_name(&kind_name)
        .ok_or_else(|| fields.error(".value_kind", format!("unknown value kind {kind_name:?}")))?;
    let address_space = match fields.opt_string(".address_space")? {
        None => None,
        Some(space) => Some(
            AddressSpace::from_name(&space)
                .ok_or_else(|| fields.error(".address_space", format!("unknown address space {space:?}")))?,
        ),
    };
    Ok(KernelArg {
        name: fields.opt_string(".name")?,
        offset: fields.u32(".offset")?,
        size: fields.u32(".size")?,
        value_kind,
        address_space,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_kind_has_a_name_that_round_trips() {
        let mut seen = std::collections::HashSet::new();
        for kind in ArgValueKind::all() {
            let name = kind.name();
            assert_ne!(name, "unknown");
            assert!(seen.insert(name), "{name} listed twice");
            assert_eq!(ArgValueKind::from_name(name), Some(kind));
            assert_eq!(kind.is_hidden(), name.starts_with("hidden_"), "{name}");
        }
        assert_eq!(ArgValueKind::from_name("hidden_unknown_thing"), None);
    }
}
