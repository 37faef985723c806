//! C `printf` on the host side: parses the device's format string, says how
//! many argument bytes it needs, and formats with C semantics.
//!
//! The argument block is what the device's `va_list` holds. With `packed`
//! (AMDGPU, the `_PACKED` opcodes) arguments follow each other with no
//! padding; otherwise each is aligned to its size. Per conversion, as in
//! LLVM's server: `*` and `%c` take 4 bytes, integer conversions 4 bytes
//! (8 with `l`, `ll`, `j`, `z`, `t`, `q`, `L`), floating conversions 8 (a
//! promoted double), `%p`, `%s` and `%n` 8 (a pointer).

/// The largest field width or precision a conversion may ask for. C has no such limit
/// (glibc fails only past `INT_MAX` characters), but a GPU program asking for more is
/// a bug, and formatting it would take host memory without bound: such a `printf`
/// fails instead, returning -1 to the device as C's `printf` does on `EOVERFLOW`.
pub const MAX_FIELD: usize = 65_535;

/// The most bytes one lane's `printf` may produce (16 MiB): many wide conversions in one
/// format would otherwise reach gigabytes within [`MAX_FIELD`]; such a call fails as one
/// with too wide a field does.
pub const MAX_OUTPUT: usize = 16 << 20;

/// Why a device `printf` could not be formatted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrintfError {
    /// A conversion's width or precision is above [`MAX_FIELD`].
    #[error("printf conversion `{conversion}` asks for a {what} of {value}, above the simulator's limit of {MAX_FIELD}")]
    FieldTooLarge {
        /// The conversion as written in the format (`%*d`, `%.99999999f`).
        conversion: String,
        /// `width` or `precision`.
        what: &'static str,
        /// The width or precision asked for.
        value: usize,
    },
    /// The formatted text would be longer than [`MAX_OUTPUT`].
    #[error("printf output of more than {MAX_OUTPUT} bytes in one call, above the simulator's limit")]
    OutputTooLarge,
}

/// One parsed conversion specification.
#[derive(Clone, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width_star: bool,
    width: Option<usize>,
    precision_star: bool,
    precision: Option<usize>,
    /// 1 = hh, 2 = h, 4 = none, 8 = l/ll/j/z/t/q/L.
    length: u8,
    conv: u8,
}

enum Piece<'a> {
    Literal(&'a [u8]),
    Spec(Spec, &'a [u8]),
}

fn parse_number(fmt: &[u8], i: &mut usize) -> usize {
    let mut n: usize = 0;
    while *i < fmt.len() && fmt[*i].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add(usize::from(fmt[*i] - b'0'));
        *i += 1;
    }
    n
}

/// Splits a format (up to its first NUL) into literal text and specifications.
fn parse(fmt: &[u8]) -> Vec<Piece<'_>> {
    let fmt = &fmt[..fmt.iter().position(|&b| b == 0).unwrap_or(fmt.len())];
    let mut pieces = Vec::new();
    let mut i = 0;
    let mut lit = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            i += 1;
            continue;
        }
        if lit < i {
            pieces.push(Piece::Literal(&fmt[lit..i]));
        }
        let start = i;
        i += 1;
        let mut spec = Spec { length: 4, ..Spec::default() };
        while i < fmt.len() {
            match fmt[i] {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if i < fmt.len() && fmt[i] == b'*' {
            spec.width_star = true;
            i += 1;
        } else if i < fmt.len() && fmt[i].is_ascii_digit() {
            spec.width = Some(parse_number(fmt, &mut i));
        }
        if i < fmt.len() && fmt[i] == b'.' {
            i += 1;
            if i < fmt.len() && fmt[i] == b'*' {
                spec.precision_star = true;
                i += 1;
            } else {
                spec.precision = Some(parse_number(fmt, &mut i));
            }
        }
        if i < fmt.len() {
            match fmt[i] {
                b'l' => {
                    spec.length = 8;
                    i += if fmt.get(i + 1) == Some(&b'l') { 2 } else { 1 };
                }
                b'j' | b'z' | b't' | b'q' | b'L' => {
                    spec.length = 8;
                    i += 1;
                }
                b'h' => {
                    if fmt.get(i + 1) == Some(&b'h') {
                        spec.length = 1;
                        i += 2;
                    } else {
                        spec.length = 2;
                        i += 1;
                    }
                }
                _ => {}
            }
        }
        if i >= fmt.len() {
            // A '%' cut off by the end of the format prints nothing.
            lit = fmt.len();
            break;
        }
        spec.conv = fmt[i];
        i += 1;
        pieces.push(Piece::Spec(spec, &fmt[start..i]));
        lit = i;
    }
    if lit < fmt.len() {
        pieces.push(Piece::Literal(&fmt[lit..]));
    }
    pieces
}

/// Sizes in bytes of the arguments a specification consumes, in order.
fn arg_sizes(spec: &Spec) -> impl Iterator<Item = u64> {
    let star_w = spec.width_star.then_some(4);
    let star_p = spec.precision_star.then_some(4);
    let value = match spec.conv {
        b'c' => Some(4),
        b'd' | b'i' | b'o' | b'u' | b'x' | b'X' | b'b' | b'B' => Some(if spec.length == 8 { 8 } else { 4 }),
        b'f' | b'F' | b'e' | b'E' | b'a' | b'A' | b'g' | b'G' => Some(8),
        b'p' | b's' | b'n' => Some(8),
        _ => None,
    };
    star_w.into_iter().chain(star_p).chain(value)
}

fn advance(count: u64, size: u64, packed: bool) -> u64 {
    if packed {
        count + size
    } else {
        count.next_multiple_of(size) + size
    }
}

/// Bytes of arguments a format consumes.
pub(crate) fn args_size(fmt: &[u8], packed: bool) -> u64 {
    let mut count = 0;
    for piece in parse(fmt) {
        if let Piece::Spec(spec, _) = piece {
            for size in arg_sizes(&spec) {
                count = advance(count, size, packed);
            }
        }
    }
    count
}

/// The device addresses of the non-NULL `%s` arguments, in format order.
pub(crate) fn string_pointers(fmt: &[u8], args: &[u8], packed: bool) -> Vec<u64> {
    let mut reader = ArgReader { args, pos: 0, packed };
    let mut ptrs = Vec::new();
    for piece in parse(fmt) {
        if let Piece::Spec(spec, _) = piece {
            for size in arg_sizes(&spec).collect::<Vec<_>>() {
                let v = reader.next(size);
                if spec.conv == b's' && size == 8 && v != 0 {
                    ptrs.push(v);
                }
            }
        }
    }
    ptrs
}

struct ArgReader<'a> {
    args: &'a [u8],
    pos: u64,
    packed: bool,
}

impl ArgReader<'_> {
    /// The next argument of `size` bytes, zero-extended; 0 past the end.
    fn next(&mut self, size: u64) -> u64 {
        let start = if self.packed { self.pos } else { self.pos.next_multiple_of(size) };
        self.pos = start + size;
        let mut b = [0u8; 8];
        for (k, slot) in b.iter_mut().enumerate().take(size as usize) {
            if let Some(&byte) = self.args.get(start as usize + k) {
                *slot = byte;
            }
        }
        u64::from_le_bytes(b)
    }
}

/// Formats a device printf: `args` is the argument block, `strings` the
/// bytes behind each non-NULL `%s` pointer in format order (each cut at its
/// first NUL).
pub fn format_packed(fmt: &[u8], args: &[u8], strings: &[Vec<u8>]) -> Result<Vec<u8>, PrintfError> {
    format(fmt, args, strings, true)
}

/// Formats a device printf (`packed`: the argument block has no padding); a conversion
/// whose width or precision is above [`MAX_FIELD`] fails the whole call.
pub(crate) fn format(fmt: &[u8], args: &[u8], strings: &[Vec<u8>], packed: bool) -> Result<Vec<u8>, PrintfError> {
    let mut reader = ArgReader { args, pos: 0, packed };
    let mut strings = strings.iter();
    let mut out = Vec::new();
    for piece in parse(fmt) {
        let (mut spec, text) = match piece {
            Piece::Literal(text) => {
                out.extend_from_slice(text);
                continue;
            }
            Piece::Spec(spec, text) => (spec, text),
        };
        if spec.width_star {
            let w = reader.next(4) as u32 as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = Some(w.unsigned_abs() as usize);
        }
        if spec.precision_star {
            let p = reader.next(4) as u32 as i32;
            spec.precision = usize::try_from(p).ok();
        }
        for (what, value) in [("width", spec.width), ("precision", spec.precision)] {
            if let Some(value) = value.filter(|&v| v > MAX_FIELD) {
                return Err(PrintfError::FieldTooLarge { conversion: String::from_utf8_lossy(text).into_owned(), what, value });
            }
        }
        let body: Vec<u8> = match spec.conv {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let raw = reader.next(if spec.length == 8 { 8 } else { 4 });
                let v = match spec.length {
                    1 => i64::from(raw as u8 as i8),
                    2 => i64::from(raw as u16 as i16),
                    4 => i64::from(raw as u32 as i32),
                    _ => raw as i64,
                };
                pad_number(&spec, sign(&spec, v < 0), b"", &int_digits(&spec, v.unsigned_abs(), 10, false))
            }
            b'u' | b'o' | b'x' | b'X' | b'b' | b'B' => {
                let raw = reader.next(if spec.length == 8 { 8 } else { 4 });
                let v = match spec.length {
                    1 => u64::from(raw as u8),
                    2 => u64::from(raw as u16),
                    4 => u64::from(raw as u32),
                    _ => raw,
                };
                let (base, upper) = match spec.conv {
                    b'o' => (8, false),
                    b'x' => (16, false),
                    b'X' => (16, true),
                    b'b' | b'B' => (2, false),
                    _ => (10, false),
                };
                let mut digits = int_digits(&spec, v, base, upper);
                let prefix: &[u8] = match spec.conv {
                    b'x' if spec.alt && v != 0 => b"0x",
                    b'X' if spec.alt && v != 0 => b"0X",
                    b'b' if spec.alt && v != 0 => b"0b",
                    b'B' if spec.alt && v != 0 => b"0B",
                    _ => b"",
                };
                if spec.conv == b'o' && spec.alt && digits.first() != Some(&b'0') {
                    digits.insert(0, b'0');
                }
                pad_number(&spec, b"", prefix, &digits)
            }
            b'c' => {
                let c = reader.next(4) as u8;
                pad(&spec, &[c])
            }
            b's' => {
                let ptr = reader.next(8);
                let s: &[u8] = if ptr == 0 {
                    if spec.precision.is_some_and(|p| p < 6) {
                        b""
                    } else {
                        b"(null)"
                    }
                } else {
                    strings.next().map(Vec::as_slice).unwrap_or(b"")
                };
                let s = &s[..spec.precision.map_or(s.len(), |p| p.min(s.len()))];
                pad(&spec, s)
            }
            b'p' => {
                let ptr = reader.next(8);
                if ptr == 0 {
                    pad(&spec, b"(nil)")
                } else {
                    let digits = format!("{ptr:x}").into_bytes();
                    pad_number(&Spec { zero: spec.zero, ..spec.clone() }, sign(&spec, false), b"0x", &digits)
                }
            }
            b'n' => {
                reader.next(8);
                continue;
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(reader.next(8));
                format_float(&spec, v)
            }
            _ => {
                // Unknown conversion: print it as written, like glibc.
                out.extend_from_slice(text);
                continue;
            }
        };
        out.extend_from_slice(&body);
        if out.len() > MAX_OUTPUT {
            return Err(PrintfError::OutputTooLarge);
        }
    }
    // Literal text (bounded by the transfer limit) is checked once, here.
    if out.len() > MAX_OUTPUT {
        return Err(PrintfError::OutputTooLarge);
    }
    Ok(out)
}

fn sign(spec: &Spec, negative: bool) -> &'static [u8] {
    if negative {
        b"-"
    } else if spec.plus {
        b"+"
    } else if spec.space {
        b" "
    } else {
        b""
    }
}

fn int_digits(spec: &Spec, v: u64, base: u64, upper: bool) -> Vec<u8> {
    let table: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    let mut digits = Vec::new();
    let mut x = v;
    while x > 0 {
        digits.push(table[(x % base) as usize]);
        x /= base;
    }
    let min = spec.precision.unwrap_or(1);
    while digits.len() < min {
        digits.push(b'0');
    }
    digits.reverse();
    digits
}

/// Pads `sign prefix digits` to the width: zeros after the prefix with `0`
/// (unless `-`, or a precision on an integer conversion), spaces otherwise.
fn pad_number(spec: &Spec, sign: &[u8], prefix: &[u8], digits: &[u8]) -> Vec<u8> {
    let len = sign.len() + prefix.len() + digits.len();
    let width = spec.width.unwrap_or(0);
    let int_conv = !matches!(spec.conv, b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A');
    let zero = spec.zero && !spec.left && !(int_conv && spec.precision.is_some());
    let mut out = Vec::with_capacity(width.max(len));
    if width > len && !spec.left && !zero {
        out.resize(width - len, b' ');
    }
    out.extend_from_slice(sign);
    out.extend_from_slice(prefix);
    if width > len && zero {
        out.resize(out.len() + width - len, b'0');
    }
    out.extend_from_slice(digits);
    if width > len && spec.left {
        out.resize(width, b' ');
    }
    out
}

fn pad(spec: &Spec, body: &[u8]) -> Vec<u8> {
    pad_number(&Spec { zero: false, ..spec.clone() }, b"", b"", body)
}

fn format_float(spec: &Spec, v: f64) -> Vec<u8> {
    let upper = spec.conv.is_ascii_uppercase();
    let s = sign(spec, v.is_sign_negative());
    let a = v.abs();
    if !a.is_finite() {
        let word: &[u8] = match (a.is_nan(), upper) {
            (true, false) => b"nan",
            (true, true) => b"NAN",
            (false, false) => b"inf",
            (false, true) => b"INF",
        };
        return pad_number(&Spec { zero: false, ..spec.clone() }, s, b"", word);
    }
    let prec = spec.precision.unwrap_or(6);
    let (prefix, digits): (&[u8], String) = match spec.conv.to_ascii_lowercase() {
        b'f' => (b"", fixed(a, prec, spec.alt)),
        b'e' => (b"", exponential(a, prec, spec.alt)),
        b'g' => (b"", general(a, spec.precision, spec.alt)),
        _ => (b"0x", hex_float(a, spec.precision, spec.alt)),
    };
    let digits = if upper { digits.to_ascii_uppercase() } else { digits };
    let prefix: &[u8] = if upper && !prefix.is_empty() { b"0X" } else { prefix };
    pad_number(spec, s, prefix, digits.as_bytes())
}

fn fixed(a: f64, prec: usize, alt: bool) -> String {
    let mut s = format!("{a:.prec$}");
    if alt && prec == 0 {
        s.push('.');
    }
    s
}

/// `d.ddde±XX`, and the decimal exponent.
fn exponential_parts(a: f64, prec: usize) -> (String, i32) {
    let s = format!("{a:.prec$e}");
    // Rust writes "<mantissa>e<exp>"; the 'e' is always there.
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    (mantissa.to_string(), exp.parse().unwrap_or(0))
}

fn exponential(a: f64, prec: usize, alt: bool) -> String {
    let (mut mantissa, exp) = exponential_parts(a, prec);
    if alt && prec == 0 {
        mantissa.push('.');
    }
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

fn strip_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn general(a: f64, precision: Option<usize>, alt: bool) -> String {
    let p = match precision {
        None => 6,
        Some(0) => 1,
        Some(p) => p,
    };
    let (_, x) = if a == 0.0 { (String::new(), 0) } else { exponential_parts(a, p - 1) };
    if (x as i64) < p as i64 && x >= -4 {
        let s = fixed(a, (p as i64 - 1 - x as i64) as usize, alt);
        if alt {
            s
        } else {
            strip_zeros(&s)
        }
    } else {
        let (mantissa, exp) = exponential_parts(a, p - 1);
        let mantissa = if alt {
            if mantissa.contains('.') { mantissa } else { mantissa + "." }
        } else {
            strip_zeros(&mantissa)
        };
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
    }
}

/// `%a` without the `0x`: `h.hhhp±d`, glibc style (normal numbers lead with
/// 1, subnormals with 0 and exponent -1022; without a precision, trailing
/// zero digits are dropped).
fn hex_float(a: f64, precision: Option<usize>, alt: bool) -> String {
    let bits = a.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i32;
    let mut frac = bits & ((1u64 << 52) - 1);
    let (mut lead, exp) = if raw_exp == 0 {
        (0u64, if frac == 0 { 0 } else { -1022 })
    } else {
        (1u64, raw_exp - 1023)
    };
    let mut ndigits = 13usize;
    if let Some(p) = precision.filter(|&p| p < 13) {
        // Round the 52-bit fraction to p hex digits, ties to even.
        let drop = 4 * (13 - p) as u32;
        let kept = frac >> drop;
        let rem = frac & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        let mut rounded = kept;
        // With no digits kept, the digit that decides a tie is the leading one.
        let odd = if p == 0 { lead & 1 == 1 } else { kept & 1 == 1 };
        if rem > half || (rem == half && odd) {
            rounded += 1;
        }
        if p < 16 && rounded >> (4 * p) != 0 {
            lead += 1;
            rounded &= (1u64 << (4 * p)) - 1;
        }
        frac = rounded << drop;
        ndigits = p;
    }
    let mut digits = format!("{frac:013x}");
    digits.truncate(ndigits);
    match precision {
        None => digits = digits.trim_end_matches('0').to_string(),
        Some(p) => {
            while digits.len() < p {
                digits.push('0');
            }
        }
    }
    let point = if !digits.is_empty() || alt { "." } else { "" };
    format!("{lead}{point}{digits}p{}{}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}
