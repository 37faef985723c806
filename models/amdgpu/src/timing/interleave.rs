//! Address interleaving over the channels of a channelled cache (L2, memory-side cache):
//! which channel an address belongs to, and the channel-local address its tag model sees.
//!
//! ```text
//!  global: | high bits | channel (log2 channels) | granule offset (log2 granule_bytes) |
//!  local:  |          high bits | granule offset |
//! ```
//!
//! The channel-select bits must be removed before the address reaches the channel's
//! [`CacheModel`](super::CacheModel): left in, they would fix some set-index bits to the
//! channel number and each channel would use only `1 / channels` of its sets. Evicted
//! lines come back as channel-local lines; [`ChannelInterleave::to_global`] restores the
//! global address for the write-back.

use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::units::{ByteAddr, LineAddr};

/// The index of one channel of a channelled cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChannelId(pub u32);

/// A power-of-two channel interleave (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelInterleave {
    channels: u32,
    granule_bytes: u64,
    line_bytes: u64,
}

impl ChannelInterleave {
    /// `channels` channels taking turns every `granule_bytes` bytes, serving lines of
    /// `line_bytes` bytes. All three must be powers of two and a line must fit in a
    /// granule.
    pub fn new(
        channels: u32,
        granule_bytes: u64,
        line_bytes: u64,
    ) -> Result<ChannelInterleave, ConfigError> {
        const MODEL: &str = "interleave";
        for (field, value) in [
            ("channels", u64::from(channels)),
            ("granule_bytes", granule_bytes),
            ("line_bytes", line_bytes),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero {
                    model: MODEL,
                    field,
                });
            }
            if !value.is_power_of_two() {
                return Err(ConfigError::NotPowerOfTwo {
                    model: MODEL,
                    field,
                    value,
                });
            }
        }
        if line_bytes > granule_bytes {
            return Err(ConfigError::TooLarge {
                model: MODEL,
                field: "line_bytes",
                value: line_bytes,
                max: granule_bytes,
            });
        }
        Ok(ChannelInterleave {
            channels,
            granule_bytes,
            line_bytes,
        })
    }

    /// Number of channels.
    pub fn channels(&self) -> u32 {
        self.channels
    }

    fn granule_bits(&self) -> u32 {
        self.granule_bytes.trailing_zeros()
    }

    fn channel_bits(&self) -> u32 {
        self.channels.trailing_zeros()
    }

    /// The channel of `addr` and the channel-local line to look up there.
    pub fn route(&self, addr: ByteAddr) -> (ChannelId, LineAddr) {
        let a = addr.get();
        let granule_bits = self.granule_bits();
        let channel = (a >> granule_bits) & (u64::from(self.channels) - 1);
        let high = a >> (granule_bits + self.channel_bits());
        let local = (high << granule_bits) | (a & (self.granule_bytes - 1));
        (
            ChannelId(channel as u32),
            ByteAddr(local).line(self.line_bytes),
        )
    }

    /// The global address of the first byte of channel-local `line` of `channel` (the
    /// inverse of [`ChannelInterleave::route`]). Channel numbers wrap modulo the count.
    pub fn to_global(&self, channel: ChannelId, line: LineAddr) -> ByteAddr {
        let local = line.first_byte(self.line_bytes).get();
        let granule_bits = self.granule_bits();
        let high = local >> granule_bits;
        let offset = local & (self.granule_bytes - 1);
        let channel = u64::from(channel.0) & (u64::from(self.channels) - 1);
        ByteAddr((((high << self.channel_bits()) | channel) << granule_bits) | offset)
    }
}
