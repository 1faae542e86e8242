//! Connect's streaming framing, as E2B's in-sandbox API uses it for process output:
//! each message is an envelope `[flags: u8][length: u32, big-endian][JSON]`; the last one
//! carries flag 0x02 and `{}` or `{"error": {...}}`.

/// The flag of the stream's last envelope.
pub const END_STREAM: u8 = 0x02;
/// The flag of a compressed envelope (never requested, so refused).
pub const COMPRESSED: u8 = 0x01;
/// The largest envelope accepted.
pub const MAX_ENVELOPE_BYTES: usize = 16 * 1024 * 1024;

/// One message of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub end_stream: bool,
    pub payload: Vec<u8>,
}

/// A stream that breaks the framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("an envelope of {0} bytes is larger than Handoff accepts")]
    TooLarge(usize),
    #[error("a compressed envelope, though none was asked for")]
    Compressed,
    #[error("the stream ended inside an envelope")]
    Truncated,
}

/// Wraps `payload` in an envelope.
pub fn encode_envelope(payload: &[u8]) -> Vec<u8> {
    let mut framed = Vec::with_capacity(payload.len() + 5);
    framed.push(0);
    framed.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    framed.extend_from_slice(payload);
    framed
}

/// Takes bytes as they arrive and hands out whole envelopes.
#[derive(Debug, Default)]
pub struct EnvelopeDecoder {
    buffer: Vec<u8>,
}

impl EnvelopeDecoder {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next whole envelope, if one has arrived.
    pub fn next_envelope(&mut self) -> Result<Option<Envelope>, FramingError> {
        if self.buffer.len() < 5 {
            return Ok(None);
        }
        let flags = self.buffer[0];
        let length = u32::from_be_bytes([
            self.buffer[1],
            self.buffer[2],
            self.buffer[3],
            self.buffer[4],
        ]) as usize;
        if length > MAX_ENVELOPE_BYTES {
            return Err(FramingError::TooLarge(length));
        }
        if flags & COMPRESSED != 0 {
            return Err(FramingError::Compressed);
        }
        if self.buffer.len() < 5 + length {
            return Ok(None);
        }
        let payload = self.buffer[5..5 + length].to_vec();
        self.buffer.drain(..5 + length);
        Ok(Some(Envelope {
            end_stream: flags & END_STREAM != 0,
            payload,
        }))
    }

    /// Checks nothing is left half-read once the stream has ended.
    pub fn finish(&self) -> Result<(), FramingError> {
        if self.buffer.is_empty() {
            Ok(())
        } else {
            Err(FramingError::Truncated)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_split_across_chunks_come_out_whole() {
        let mut stream = encode_envelope(br#"{"event":{"start":{"pid":7}}}"#);
        let mut end = vec![END_STREAM];
        end.extend_from_slice(&2u32.to_be_bytes());
        end.extend_from_slice(b"{}");
        stream.extend_from_slice(&end);
        let mut decoder = EnvelopeDecoder::default();
        let mut envelopes = Vec::new();
        for byte in stream {
            decoder.push(&[byte]);
            while let Some(envelope) = decoder.next_envelope().unwrap() {
                envelopes.push(envelope);
            }
        }
        assert_eq!(envelopes.len(), 2);
        assert_eq!(envelopes[0].payload, br#"{"event":{"start":{"pid":7}}}"#);
        assert!(envelopes[1].end_stream);
        decoder.finish().unwrap();
    }

    #[test]
    fn a_huge_or_cut_envelope_is_an_error() {
        let mut decoder = EnvelopeDecoder::default();
        decoder.push(&[0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            decoder.next_envelope(),
            Err(FramingError::TooLarge(0xffff_ffff))
        );
        let mut decoder = EnvelopeDecoder::default();
        decoder.push(&encode_envelope(b"{}")[..4]);
        assert_eq!(decoder.next_envelope(), Ok(None));
        assert_eq!(decoder.finish(), Err(FramingError::Truncated));
    }
}
