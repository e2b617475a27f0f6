//! Compressed streams: gzip, zstd, xz and bzip2, through maintained crates (`flate2`, `zstd`,
//! `liblzma`, `bzip2`). Inputs are recognized by their magic bytes (never by name), outputs
//! chosen by their file name's extension.
use std::io::{BufRead, Read, Write};
use std::path::Path;

/// A compressed stream format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// gzip (`.gz`), RFC 1952; concatenated members are read as one stream.
    Gzip,
    /// Zstandard (`.zst`); concatenated frames are read as one stream.
    Zstd,
    /// xz (`.xz`, LZMA2); concatenated streams are read as one stream.
    Xz,
    /// bzip2 (`.bz2`); concatenated streams are read as one stream.
    Bzip2,
}

/// Every codec, in the order [`Codec::detect`] tries them.
pub const ALL: [Codec; 4] = [Codec::Gzip, Codec::Zstd, Codec::Xz, Codec::Bzip2];

/// The longest magic number (xz's six bytes): how much of a stream [`Codec::detect`] needs.
pub const MAGIC_LEN: usize = 6;

impl Codec {
    /// The format's usual name ("gzip", "zstd", "xz", "bzip2").
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Xz => "xz",
            Codec::Bzip2 => "bzip2",
        }
    }

    /// The file name extension, with its dot (".gz", ".zst", ".xz", ".bz2").
    pub fn extension(self) -> &'static str {
        match self {
            Codec::Gzip => ".gz",
            Codec::Zstd => ".zst",
            Codec::Xz => ".xz",
            Codec::Bzip2 => ".bz2",
        }
    }

    fn magic(self) -> &'static [u8] {
        match self {
            Codec::Gzip => &[0x1f, 0x8b],
            Codec::Zstd => &[0x28, 0xb5, 0x2f, 0xfd],
            Codec::Xz => &[0xfd, b'7', b'z', b'X', b'Z', 0x00],
            Codec::Bzip2 => b"BZh",
        }
    }

    /// The codec whose magic number `head` (a stream's first [`MAGIC_LEN`] bytes, or all of a
    /// shorter one) starts with, if any.
    pub fn detect(head: &[u8]) -> Option<Codec> {
        ALL.into_iter().find(|c| head.starts_with(c.magic()))
    }

    /// The codec a file name asks for by its extension (`.gz`, `.zst`, `.xz`, `.bz2`), if any.
    pub fn from_path(path: &Path) -> Option<Codec> {
        let name = path.to_string_lossy();
        ALL.into_iter().find(|c| name.ends_with(c.extension()))
    }

    /// A reader of the decompressed stream.
    ///
    /// # Errors
    /// An I/O error when the decoder cannot start (zstd's context allocation).
    pub fn decoder<'a>(self, reader: impl BufRead + 'a) -> std::io::Result<Box<dyn Read + 'a>> {
        Ok(match self {
            Codec::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(reader)),
            Codec::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(reader)?),
            Codec::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(reader)),
            Codec::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(reader)),
        })
    }

    /// A writer that compresses into `writer` at the format's default level;
    /// [`Encoder::finish`] ends the stream.
    ///
    /// # Errors
    /// An I/O error when the encoder cannot start.
    pub fn encoder<W: Write>(self, writer: W) -> std::io::Result<Encoder<W>> {
        Ok(Encoder(match self {
            Codec::Gzip => Inner::Gzip(flate2::write::GzEncoder::new(writer, flate2::Compression::default())),
            Codec::Zstd => Inner::Zstd(zstd::stream::write::Encoder::new(writer, zstd::DEFAULT_COMPRESSION_LEVEL)?),
            Codec::Xz => Inner::Xz(liblzma::write::XzEncoder::new(writer, 6)),
            Codec::Bzip2 => Inner::Bzip2(bzip2::write::BzEncoder::new(writer, bzip2::Compression::default())),
        }))
    }
}

/// A compressing writer ([`Codec::encoder`]). Dropping it without [`Encoder::finish`] may
/// leave the stream unterminated.
pub struct Encoder<W: Write>(Inner<W>);

enum Inner<W: Write> {
    Gzip(flate2::write::GzEncoder<W>),
    Zstd(zstd::stream::write::Encoder<'static, W>),
    Xz(liblzma::write::XzEncoder<W>),
    Bzip2(bzip2::write::BzEncoder<W>),
}

impl<W: Write> Encoder<W> {
    /// Writes the end of the stream and returns the inner writer (not flushed).
    ///
    /// # Errors
    /// The inner writer's errors.
    pub fn finish(self) -> std::io::Result<W> {
        match self.0 {
            Inner::Gzip(e) => e.finish(),
            Inner::Zstd(e) => e.finish(),
            Inner::Xz(e) => e.finish(),
            Inner::Bzip2(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.0 {
            Inner::Gzip(e) => e.write(buf),
            Inner::Zstd(e) => e.write(buf),
            Inner::Xz(e) => e.write(buf),
            Inner::Bzip2(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.0 {
            Inner::Gzip(e) => e.flush(),
            Inner::Zstd(e) => e.flush(),
            Inner::Xz(e) => e.flush(),
            Inner::Bzip2(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips_and_is_detected_by_content() {
        let text: Vec<u8> = (0..100_000u32).flat_map(|i| format!("{} {} {}\n", i % 97 + 1, i % 89 + 1, i).into_bytes()).collect();
        for codec in ALL {
            let mut e = codec.encoder(Vec::new()).unwrap();
            e.write_all(&text).unwrap();
            let packed = e.finish().unwrap();
            assert!(packed.len() < text.len() / 2, "{}: {} bytes", codec.name(), packed.len());
            assert_eq!(Codec::detect(&packed[..MAGIC_LEN]), Some(codec));
            assert_eq!(Codec::from_path(Path::new(&format!("a.mtx{}", codec.extension()))), Some(codec));
            // Two streams back to back read as one.
            let twice = [packed.clone(), packed].concat();
            let mut back = Vec::new();
            codec.decoder(std::io::BufReader::new(&twice[..])).unwrap().read_to_end(&mut back).unwrap();
            assert_eq!(back.len(), 2 * text.len(), "{}", codec.name());
            assert!(back[..text.len()] == text[..] && back[text.len()..] == text[..], "{}", codec.name());
        }
        assert_eq!(Codec::detect(b"%%MatrixMarket"), None);
        assert_eq!(Codec::detect(b""), None);
        assert_eq!(Codec::from_path(Path::new("a.mtx")), None);
    }
}
