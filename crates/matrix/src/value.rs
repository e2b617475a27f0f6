//! Value types a matrix can hold, and how Matrix Market tokens become them.
use num_complex::{Complex32, Complex64};

/// The Matrix Market `field` of a file, and the one a value type is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `real`
    Real,
    /// `integer`
    Integer,
    /// `complex`
    Complex,
    /// `pattern` (no values)
    Pattern,
}

impl Field {
    /// The header word.
    pub fn name(self) -> &'static str {
        match self {
            Field::Real => "real",
            Field::Integer => "integer",
            Field::Complex => "complex",
            Field::Pattern => "pattern",
        }
    }
}

/// One entry's value tokens as read from a file, before conversion to the requested type.
#[derive(Debug, Clone, Copy)]
pub enum Raw<'a> {
    /// A `real` field token.
    Real(&'a str),
    /// An `integer` field token.
    Integer(&'a str),
    /// A `complex` field's two tokens.
    Complex(&'a str, &'a str),
    /// A `pattern` entry (no token).
    Pattern,
}

/// Plain-old-data values of a sparse matrix: `f32`, `f64`, `half::f16`, `half::bf16`, the
/// integers `i8` to `i128` and `u8` to `u128` (not `u32`/`u64`: indices), [`Complex32`],
/// [`Complex64`], and `()` for pattern matrices (no values are stored: `Vec<()>` is free).
pub trait Value: Copy + PartialEq + std::fmt::Debug + Default + Send + Sync + 'static {
    /// The field this type is written as.
    const FIELD: Field;
    /// Sum (duplicates are summed when compressing; integers wrap).
    fn add(self, other: Self) -> Self;
    /// The mirror of a skew-symmetric entry.
    fn neg(self) -> Self;
    /// The mirror of a hermitian entry (the conjugate; itself for real types).
    fn conj(self) -> Self;
    /// Whether this is exactly zero (pattern entries never are).
    fn is_zero(self) -> bool;
    /// The value's bits (zero-extended; real and imaginary parts side by side for complex):
    /// equality of bit patterns, under which NaN equals a NaN of the same bits.
    fn bit_pattern(self) -> u128;
    /// Whether the imaginary part is zero (always for real types).
    fn imag_is_zero(self) -> bool {
        true
    }
    /// The value of a pattern entry when numbers are asked for: one.
    fn one() -> Self;
    /// A value from a float (generators).
    fn from_f64(x: f64) -> Self;
    /// Converts a file's tokens, or says why not (the reader adds the line number).
    fn from_raw(raw: Raw<'_>) -> Result<Self, String>;
    /// Writes the value tokens (Matrix Market syntax, reading back bit-identical).
    fn write_tokens(self, out: &mut String);
}

/// Floats the writer spells: finite ones through `ryu`.
trait WriteFloat: ryu::Float + Copy {
    fn is_finite(self) -> bool;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

macro_rules! write_float_impl {
    ($($t:ty),*) => {$(
        impl WriteFloat for $t {
            fn is_finite(self) -> bool { <$t>::is_finite(self) }
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            fn is_sign_negative(self) -> bool { <$t>::is_sign_negative(self) }
        }
    )*};
}
write_float_impl!(f32, f64);

/// Writes the shortest decimal that reads back to the same bits, with an exponent where that is
/// shorter (`ryu`: `5e-324`, `1e300`, `0.1`), or `nan` / `inf` / `-inf`.
fn write_float<F: WriteFloat>(v: F, out: &mut String) {
    if v.is_finite() {
        out.push_str(ryu::Buffer::new().format_finite(v));
    } else if v.is_nan() {
        out.push_str("nan");
    } else if v.is_sign_negative() {
        out.push_str("-inf");
    } else {
        out.push_str("inf");
    }
}

fn parse_float<F: std::str::FromStr + Copy>(tok: &str, finite: impl Fn(F) -> bool, what: &str) -> Result<F, String> {
    let v: F = tok.parse().map_err(|_| format!("invalid {what} value `{}`", crate::mm::quote(tok)))?;
    if !finite(v) {
        return Err(format!("value `{}` does not fit {what} (out of range)", crate::mm::quote(tok)));
    }
    Ok(v)
}

fn parse_int<N: std::str::FromStr>(tok: &str, what: &str) -> Result<N, String> {
    tok.parse().map_err(|_| {
        let numeric = tok.trim_start_matches(['+', '-']).bytes().all(|b| b.is_ascii_digit()) && !tok.is_empty();
        if numeric {
            format!("integer `{}` does not fit {what}", crate::mm::quote(tok))
        } else {
            format!("invalid integer value `{}`", crate::mm::quote(tok))
        }
    })
}

macro_rules! float_value {
    ($t:ty, $name:literal) => {
        impl Value for $t {
            const FIELD: Field = Field::Real;
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn neg(self) -> Self {
                -self
            }
            fn conj(self) -> Self {
                self
            }
            fn is_zero(self) -> bool {
                self == 0.0
            }
            fn bit_pattern(self) -> u128 {
                self.to_bits() as u128
            }
            fn one() -> Self {
                1.0
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn from_raw(raw: Raw<'_>) -> Result<Self, String> {
                match raw {
                    Raw::Real(t) => parse_float::<$t>(
                        t,
                        |v| v.is_finite() || t.to_ascii_lowercase().contains("inf") || t.to_ascii_lowercase().contains("nan"),
                        $name,
                    ),
                    Raw::Integer(t) => {
                        let i: i64 = parse_int(t, "i64")?;
                        let v = i as $t;
                        if v as i128 != i as i128 {
                            return Err(format!("integer `{}` is not exact in {}", crate::mm::quote(t), $name));
                        }
                        Ok(v)
                    }
                    Raw::Complex(..) => Err(format!("complex file read into a real type ({})", $name)),
                    Raw::Pattern => Ok(1.0),
                }
            }
            fn write_tokens(self, out: &mut String) {
                write_float(self, out);
            }
        }
    };
}
float_value!(f32, "f32");
float_value!(f64, "f64");

macro_rules! int_value {
    ($t:ty, $name:literal) => {
        impl Value for $t {
            const FIELD: Field = Field::Integer;
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn conj(self) -> Self {
                self
            }
            fn is_zero(self) -> bool {
                self == 0
            }
            fn bit_pattern(self) -> u128 {
                self as u128 & (u128::MAX >> (128 - 8 * std::mem::size_of::<$t>()))
            }
            fn one() -> Self {
                1
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn from_raw(raw: Raw<'_>) -> Result<Self, String> {
                match raw {
                    Raw::Integer(t) => parse_int(t, $name),
                    Raw::Real(_) => Err(format!("real file read into an integer type ({})", $name)),
                    Raw::Complex(..) => Err(format!("complex file read into an integer type ({})", $name)),
                    Raw::Pattern => Ok(1),
                }
            }
            fn write_tokens(self, out: &mut String) {
                use std::fmt::Write;
                let _ = write!(out, "{}", self);
            }
        }
    };
}
int_value!(i8, "i8");
int_value!(u8, "u8");
int_value!(i16, "i16");
int_value!(u16, "u16");
int_value!(i32, "i32");
int_value!(i64, "i64");
int_value!(i128, "i128");
int_value!(u128, "u128");

macro_rules! half_value {
    ($t:ty, $name:literal) => {
        impl Value for $t {
            const FIELD: Field = Field::Real;
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn neg(self) -> Self {
                -self
            }
            fn conj(self) -> Self {
                self
            }
            fn is_zero(self) -> bool {
                self.to_f32() == 0.0
            }
            fn bit_pattern(self) -> u128 {
                self.to_bits() as u128
            }
            fn one() -> Self {
                <$t>::ONE
            }
            fn from_f64(x: f64) -> Self {
                <$t>::from_f64(x)
            }
            fn from_raw(raw: Raw<'_>) -> Result<Self, String> {
                // Rounded once, from the token's f64 (exact for every value the writer spells).
                let x = f64::from_raw(raw).map_err(|e| e.replace("f64", $name))?;
                let v = <$t>::from_f64(x);
                if v.is_infinite() && x.is_finite() {
                    return Err(format!("value {x} does not fit {} (out of range)", $name));
                }
                Ok(v)
            }
            fn write_tokens(self, out: &mut String) {
                // Every half value is an f32 exactly; its shortest f32 spelling reads back to it.
                write_float(self.to_f32(), out);
            }
        }
    };
}
half_value!(half::f16, "f16");
half_value!(half::bf16, "bf16");

macro_rules! complex_value {
    ($t:ty, $f:ty, $name:literal) => {
        impl Value for $t {
            const FIELD: Field = Field::Complex;
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn neg(self) -> Self {
                -self
            }
            fn conj(self) -> Self {
                <$t>::conj(&self)
            }
            fn is_zero(self) -> bool {
                self.re == 0.0 && self.im == 0.0
            }
            fn bit_pattern(self) -> u128 {
                ((self.re.to_bits() as u128) << 64) | self.im.to_bits() as u128
            }
            fn imag_is_zero(self) -> bool {
                self.im == 0.0
            }
            fn one() -> Self {
                <$t>::new(1.0, 0.0)
            }
            fn from_f64(x: f64) -> Self {
                <$t>::new(x as $f, 0.0)
            }
            fn from_raw(raw: Raw<'_>) -> Result<Self, String> {
                let re = |t: &str| -> Result<$f, String> { <$f as Value>::from_raw(Raw::Real(t)) };
                match raw {
                    Raw::Complex(a, b) => Ok(<$t>::new(re(a)?, re(b)?)),
                    Raw::Real(a) => Ok(<$t>::new(re(a)?, 0.0)),
                    Raw::Integer(a) => Ok(<$t>::new(<$f as Value>::from_raw(Raw::Integer(a))?, 0.0)),
                    Raw::Pattern => Ok(Self::one()),
                }
            }
            fn write_tokens(self, out: &mut String) {
                write_float(self.re, out);
                out.push(' ');
                write_float(self.im, out);
            }
        }
    };
}
complex_value!(Complex32, f32, "complex f32");
complex_value!(Complex64, f64, "complex f64");

impl Value for () {
    const FIELD: Field = Field::Pattern;
    fn add(self, _: Self) -> Self {}
    fn neg(self) -> Self {}
    fn conj(self) -> Self {}
    fn is_zero(self) -> bool {
        false
    }
    fn bit_pattern(self) -> u128 {
        0
    }
    fn one() -> Self {}
    fn from_f64(_: f64) -> Self {}
    fn from_raw(raw: Raw<'_>) -> Result<Self, String> {
        // Values are dropped, but they must still be numbers.
        match raw {
            Raw::Real(t) => f64::from_raw(Raw::Real(t)).map(|_| ()),
            Raw::Integer(t) => i64::from_raw(Raw::Integer(t)).map(|_| ()),
            Raw::Complex(a, b) => Complex64::from_raw(Raw::Complex(a, b)).map(|_| ()),
            Raw::Pattern => Ok(()),
        }
    }
    fn write_tokens(self, _: &mut String) {}
}
