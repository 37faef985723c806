//! An exact standard exponential variate from one 64-bit random draw, by the ziggurat
//! method (Marsaglia and Tsang, "The Ziggurat Method for Generating Random
//! Variables", 2000) with 256 layers of equal area.
//!
//! The density `e^-x` is covered by 256 horizontal layers: layer 0 is the rectangle
//! `[0, x0) x [0, e^-R)` plus the tail beyond `R`; layer `i >= 1` is the rectangle
//! `[0, x_i) x [e^-x_i, e^-x_(i+1))`. The low 8 bits of the draw pick a layer, its top
//! 53 bits a point across it. About 98.9% of draws land where the layer is surely
//! under the curve and cost one table look-up, one multiplication and one comparison;
//! the rest take the wedge test or the tail, whose further random bits come from a
//! counter-based sub-stream of the same draw (`mix64(draw + k * 0x9E3779B97F4A7C15)`,
//! `k = 1, 2, ...`). So the variate is a pure function of the one draw, and the
//! distribution is exactly exponential up to the 53-bit resolution of the draw.

use std::sync::LazyLock;

use super::mix64;

/// Number of layers: one byte of the draw picks one.
const LAYERS: usize = 256;
/// Where the tail starts: the right edge of the topmost-but-one layer.
const R: f64 = 7.697_117_470_131_05;
/// The area of every layer (for layer 0, its rectangle and the tail together).
const AREA: f64 = 0.003_949_659_822_581_557;
/// 2^53: the resolution of the point across a layer.
const SCALE: f64 = 9_007_199_254_740_992.0;
/// The stride of the rejection sub-stream.
const SUB_STRIDE: u64 = 0x9E37_79B9_7F4A_7C15;

/// The layer tables of the exponential ziggurat, computed once per process
/// ([`Ziggurat::exponential`]); [`Ziggurat::sample`] draws from them.
#[derive(Debug)]
pub struct Ziggurat {
    /// Per layer, the 53-bit positions below which a point is surely under the curve
    /// (`x_(i+1) / x_i * 2^53`).
    accept: [u64; LAYERS],
    /// Per layer, the x of one 53-bit position step (`x_i / 2^53`).
    step: [f64; LAYERS],
    /// `e^-x_i` for the layer edges `x_0 .. x_256` (`x_256 = 0`).
    height: [f64; LAYERS + 1],
}

static TABLES: LazyLock<Ziggurat> = LazyLock::new(Ziggurat::new);

impl Ziggurat {
    /// The tables of the standard exponential distribution (built on first use).
    pub fn exponential() -> &'static Ziggurat {
        &TABLES
    }

    fn new() -> Ziggurat {
        let mut edge = [0.0f64; LAYERS + 1];
        edge[0] = AREA / (-R).exp();
        edge[1] = R;
        for i in 1..LAYERS - 1 {
            edge[i + 1] = -((-edge[i]).exp() + AREA / edge[i]).ln();
        }
        edge[LAYERS] = 0.0;
        let mut t = Ziggurat { accept: [0; LAYERS], step: [0.0; LAYERS], height: [0.0; LAYERS + 1] };
        for i in 0..LAYERS {
            // The ratio is below 1, so the product is below 2^53 and fits.
            t.accept[i] = (edge[i + 1] / edge[i] * SCALE) as u64;
            t.step[i] = edge[i] / SCALE;
        }
        for (h, x) in t.height.iter_mut().zip(edge) {
            *h = (-x).exp();
        }
        t
    }
}

/// A uniform number in `[0, 1)` from the top 53 bits of `x`.
#[inline]
fn uniform(x: u64) -> f64 {
    // A 53-bit value converts exactly, and through the signed conversion (one
    // instruction on x86_64).
    ((x >> 11) as i64) as f64 * (1.0 / SCALE)
}

/// A standard exponential variate (mean 1) made from the random draw `draw`:
/// `Ziggurat::exponential().sample(draw)`.
///
/// A pure function of `draw`: equal draws give equal variates on every thread. The
/// result is finite and non-negative.
#[inline]
pub fn exponential(draw: u64) -> f64 {
    Ziggurat::exponential().sample(draw)
}

impl Ziggurat {
    /// The variate of the draw `draw` (see [`exponential`]). Hot loops keep the
    /// `&'static Ziggurat` and call this, skipping the once-only initialization check.
    #[inline(always)]
    pub fn sample(&self, draw: u64) -> f64 {
        let layer = (draw & 0xFF) as usize;
        let pos = draw >> 11;
        if pos < self.accept[layer] {
            return (pos as i64) as f64 * self.step[layer];
        }
        sample_slow(self, draw)
    }
}

/// The wedges and the tail: the rare rest of [`Ziggurat::sample`].
#[cold]
#[inline(never)]
fn sample_slow(t: &Ziggurat, draw: u64) -> f64 {
    let mut bits = draw;
    let mut sub = 0u64;
    let mut next = || {
        sub += 1;
        mix64(draw.wrapping_add(sub.wrapping_mul(SUB_STRIDE)))
    };
    // Every trip through the tail adds R: the exponential forgets how far it went.
    let mut offset = 0.0;
    loop {
        let layer = (bits & 0xFF) as usize;
        let pos = bits >> 11;
        let x = (pos as i64) as f64 * t.step[layer];
        if pos < t.accept[layer] {
            return offset + x;
        }
        if layer == 0 {
            offset += R;
        } else {
            let y = t.height[layer] + uniform(next()) * (t.height[layer + 1] - t.height[layer]);
            if y < (-x).exp() {
                return offset + x;
            }
        }
        bits = next();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draws of a counter-based stream, as PHOLD makes them.
    fn draws(n: u64) -> impl Iterator<Item = u64> {
        (0..n).map(|c| mix64(0x1234_5678u64.wrapping_add(c.wrapping_mul(SUB_STRIDE))))
    }

    #[test]
    fn layers_cover_equal_areas_down_to_zero() {
        let t = &*TABLES;
        // The last computed edge lands near zero (the area closes the ziggurat).
        let x255 = t.step[LAYERS - 1] * SCALE;
        let top = x255 * (1.0 - t.height[LAYERS - 1]);
        assert!((top - AREA).abs() < 1e-6, "top layer area {top}");
        // Edges decrease from layer 1 on, so acceptance ratios stay below one.
        assert!(t.accept.iter().all(|&k| (k as f64) < SCALE));
        assert_eq!(t.accept[LAYERS - 1], 0);
    }

    #[test]
    fn mean_and_variance_are_one() {
        let n = 400_000u64;
        let (mut sum, mut sq) = (0.0, 0.0);
        for d in draws(n) {
            let e = exponential(d);
            assert!(e.is_finite() && e >= 0.0);
            sum += e;
            sq += e * e;
        }
        let mean = sum / n as f64;
        let var = sq / n as f64 - mean * mean;
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
    }

    #[test]
    fn distribution_matches_the_exponential_cdf() {
        let n = 400_000u64;
        let points = [0.05, 0.25, 0.5, 1.0, 2.0, 4.0, 7.0, 9.0];
        let mut below = [0u64; 8];
        for d in draws(n) {
            let e = exponential(d);
            for (b, &p) in below.iter_mut().zip(&points) {
                *b += u64::from(e < p);
            }
        }
        for (b, &p) in below.iter().zip(&points) {
            let want = 1.0 - (-p).exp();
            let got = *b as f64 / n as f64;
            // Four standard deviations of a binomial proportion.
            let tol = 4.0 * (want * (1.0 - want) / n as f64).sqrt() + 1e-6;
            assert!((got - want).abs() < tol, "P(E < {p}) = {got}, want {want}");
        }
    }

    #[test]
    fn tail_and_wedges_are_reached_and_deterministic() {
        // Layer 0 with the top position lands in the tail; layer 5 with the top
        // position in a wedge.
        let tail = 0xFFFF_FFFF_FFFF_F800;
        let wedge = 0xFFFF_FFFF_FFFF_F805;
        let e = exponential(tail);
        assert!(e >= R, "tail variate {e}");
        assert_eq!(e.to_bits(), exponential(tail).to_bits());
        let w = exponential(wedge);
        assert!(w.is_finite() && w >= 0.0);
        assert_eq!(w.to_bits(), exponential(wedge).to_bits());
    }
}
