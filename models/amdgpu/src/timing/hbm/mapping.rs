//! Physical address to DRAM location: which stack, channel, pseudo-channel, bank group,
//! bank, row and column an address falls in.
//!
//! The address is cut into bit fields, lowest first:
//!
//! ```text
//!  high                                                        low
//! | row | field order[n-1] | ... | field order[0] | granule offset |
//! ```
//!
//! * the low `log2(interleave_bytes)` bits stay inside one pseudo-channel and one row
//!   (the interleave granule);
//! * then one field per entry of `order`, each `log2(count)` bits wide, where `count` is
//!   the number of channels per stack, pseudo-channels per channel, stacks, bank groups,
//!   banks per group, or granules per row (`Column`);
//! * every bit above is the row.
//!
//! With `bank_xor` the bank and bank-group indices are XORed with the low row bits, the
//! usual permutation that spreads same-bank strides over banks.
//!
//! The default order, `channel, stack, pseudo_channel, column, bank_group, bank`, sends
//! consecutive granules to different channels first (so a stream uses every channel), and
//! keeps the granules a pseudo-channel sees in one open row as long as possible.

use serde::{Deserialize, Serialize};

use crate::timing::error::ConfigError;

/// One bit field of the address map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MapField {
    /// Channel within a stack.
    Channel,
    /// Pseudo-channel within a channel.
    PseudoChannel,
    /// Stack.
    Stack,
    /// Bank group within a pseudo-channel.
    BankGroup,
    /// Bank within a bank group.
    Bank,
    /// Granule within a row (the high column bits).
    Column,
}

/// All fields, each of which `AddressMapping::order` must list exactly once.
const ALL_FIELDS: [MapField; 6] = [
    MapField::Channel,
    MapField::PseudoChannel,
    MapField::Stack,
    MapField::BankGroup,
    MapField::Bank,
    MapField::Column,
];

/// How addresses are spread over the DRAM (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressMapping {
    /// Bytes kept together on one pseudo-channel and row; a power of two no larger than
    /// the row.
    pub interleave_bytes: u64,
    /// The fields above the granule, lowest bits first.
    pub order: Vec<MapField>,
    /// XOR the bank and bank-group indices with the low row bits.
    pub bank_xor: bool,
}

impl Default for AddressMapping {
    /// 256-byte granules; `channel, stack, pseudo_channel, column, bank_group, bank`;
    /// bank XOR on.
    fn default() -> AddressMapping {
        AddressMapping {
            interleave_bytes: 256,
            order: vec![
                MapField::Channel,
                MapField::Stack,
                MapField::PseudoChannel,
                MapField::Column,
                MapField::BankGroup,
                MapField::Bank,
            ],
            bank_xor: true,
        }
    }
}

/// Where one address lives in the DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DramLocation {
    /// Stack index.
    pub stack: u32,
    /// Channel within the stack.
    pub channel: u32,
    /// Pseudo-channel within the channel.
    pub pseudo_channel: u32,
    /// Bank group within the pseudo-channel.
    pub bank_group: u32,
    /// Bank within the group.
    pub bank: u32,
    /// Row within the bank.
    pub row: u64,
    /// Granule within the row.
    pub column: u32,
}

/// Field widths resolved against a geometry, ready to decode addresses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Decoder {
    granule_bits: u32,
    /// (field, bit width) lowest first.
    fields: Vec<(MapField, u32)>,
    bank_bits: u32,
    bank_group_bits: u32,
    bank_xor: bool,
}

/// The element counts of each field (all powers of two, checked by the caller).
pub(crate) struct FieldCounts {
    pub(crate) stacks: u32,
    pub(crate) channels: u32,
    pub(crate) pseudo_channels: u32,
    pub(crate) bank_groups: u32,
    pub(crate) banks: u32,
    pub(crate) columns: u64,
}

impl Decoder {
    pub(crate) fn new(
        mapping: &AddressMapping,
        counts: &FieldCounts,
    ) -> Result<Decoder, ConfigError> {
        for field in ALL_FIELDS {
            let n = mapping.order.iter().filter(|&&f| f == field).count();
            if n != 1 {
                return Err(ConfigError::BadFieldOrder {
                    problem: format!("{field:?} appears {n} times"),
                });
            }
        }
        if mapping.order.len() != ALL_FIELDS.len() {
            return Err(ConfigError::BadFieldOrder {
                problem: format!("{} fields given", mapping.order.len()),
            });
        }
        let width = |field: MapField| -> u32 {
            let count = match field {
                MapField::Channel => u64::from(counts.channels),
                MapField::PseudoChannel => u64::from(counts.pseudo_channels),
                MapField::Stack => u64::from(counts.stacks),
                MapField::BankGroup => u64::from(counts.bank_groups),
                MapField::Bank => u64::from(counts.banks),
                MapField::Column => counts.columns,
            };
            count.trailing_zeros()
        };
        Ok(Decoder {
            granule_bits: mapping.interleave_bytes.trailing_zeros(),
            fields: mapping.order.iter().map(|&f| (f, width(f))).collect(),
            bank_bits: width(MapField::Bank),
            bank_group_bits: width(MapField::BankGroup),
            bank_xor: mapping.bank_xor,
        })
    }

    /// Bits of the address below the row: granule plus every field.
    pub(crate) fn granule_bytes(&self) -> u64 {
        1 << self.granule_bits
    }

    pub(crate) fn decode(&self, addr: u64) -> DramLocation {
        let mut rest = addr >> self.granule_bits;
        let mut loc = DramLocation {
            stack: 0,
            channel: 0,
            pseudo_channel: 0,
            bank_group: 0,
            bank: 0,
            row: 0,
            column: 0,
        };
        for &(field, bits) in &self.fields {
            let value = (rest & ((1u64 << bits) - 1)) as u32;
            rest >>= bits;
            match field {
                MapField::Channel => loc.channel = value,
                MapField::PseudoChannel => loc.pseudo_channel = value,
                MapField::Stack => loc.stack = value,
                MapField::BankGroup => loc.bank_group = value,
                MapField::Bank => loc.bank = value,
                MapField::Column => loc.column = value,
            }
        }
        loc.row = rest;
        if self.bank_xor {
            let bank_mask = (1u64 << self.bank_bits) - 1;
            let group_mask = (1u64 << self.bank_group_bits) - 1;
            loc.bank ^= (rest & bank_mask) as u32;
            loc.bank_group ^= ((rest >> self.bank_bits) & group_mask) as u32;
        }
        loc
    }

    /// The bit layout, lowest first, as (field name, lowest bit, width); the granule
    /// offset is `"offset"` and the row `"row"` (width 0 meaning "all remaining bits").
    pub(crate) fn layout(&self) -> Vec<(&'static str, u32, u32)> {
        let mut out = vec![("offset", 0, self.granule_bits)];
        let mut lo = self.granule_bits;
        for &(field, bits) in &self.fields {
            let name = match field {
                MapField::Channel => "channel",
                MapField::PseudoChannel => "pseudo_channel",
                MapField::Stack => "stack",
                MapField::BankGroup => "bank_group",
                MapField::Bank => "bank",
                MapField::Column => "column",
            };
            out.push((name, lo, bits));
            lo += bits;
        }
        out.push(("row", lo, 0));
        out
    }
}
