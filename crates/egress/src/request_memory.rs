//! The memory a key forwarder lets requests take while it reads them, so that requests
//! from inside a sandbox, however large and however many at once, cannot make it run out
//! of memory and stop metering.
//!
//! A model call's request is read whole before it leaves: its worst case is counted from
//! it, and a Chat Completions stream's is changed to ask for its usage. Each request may
//! be at most [`LARGEST_REQUEST_BYTES`], which is what the providers take too (Anthropic's
//! Messages API refuses larger ones); one larger is refused before it is read. While it
//! is read and parsed a request holds three times its size of the forwarder's
//! [`REQUEST_MEMORY_BYTES`], taken as it comes (or, when its length is declared, before
//! it is read): its first megabyte at once, or it is refused as overloaded (the
//! provider's own answer to a busy moment, which agents retry); past that, larger
//! requests take turns, one at a time waiting for what the others give back, so that
//! requests at once never each hold part of what another waits for. Large requests are
//! read one after another; their answers still stream at once.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The largest request passed on: the providers' own limit (32 MB).
pub const LARGEST_REQUEST_BYTES: usize = 32 * 1024 * 1024;
/// What the requests being read may take together.
pub const REQUEST_MEMORY_BYTES: usize = 160 * 1024 * 1024;
/// The share is counted in pieces of this size.
const PIECE_BYTES: usize = 1024;
/// A request's bytes, its parse included.
const HELD_PER_BYTE: usize = 3;
/// How long a request waits for its share before it is refused as overloaded.
const WAIT_FOR_MEMORY: Duration = Duration::from_secs(60);
/// What a request without a length may take before it must wait its turn.
const UNWAITED_BYTES: usize = 1024 * 1024;

/// The memory requests share while they are read.
#[derive(Debug, Clone)]
pub struct RequestMemory {
    pieces: Arc<Semaphore>,
    /// The one request without a length that may wait for more memory.
    growing: Arc<Semaphore>,
}

impl Default for RequestMemory {
    fn default() -> Self {
        RequestMemory::new(REQUEST_MEMORY_BYTES)
    }
}

/// Why a request was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestRefusal {
    #[error("the request is larger than the {} MB a model call may be", LARGEST_REQUEST_BYTES / (1024 * 1024))]
    TooLarge,
    #[error("the key forwarder is reading as many requests as it can hold; retry shortly")]
    Overloaded,
    #[error("the request broke off: {0}")]
    BrokeOff(String),
}

/// A request read whole, with the share of memory it holds until it is dropped.
#[derive(Debug)]
pub struct ReadRequest {
    pub body: Bytes,
    _held: Vec<OwnedSemaphorePermit>,
}

/// The memory one request holds while it is read.
struct Share<'a> {
    memory: &'a RequestMemory,
    held: Vec<OwnedSemaphorePermit>,
    /// The bytes `held` is for.
    held_for: usize,
    /// The turn of a request past [`UNWAITED_BYTES`], taken once it gets there.
    large: Option<OwnedSemaphorePermit>,
}

impl Share<'_> {
    /// Holds enough for `bytes`: up to [`UNWAITED_BYTES`] at once or not at all; past
    /// it, in the large request's turn, waiting for what others give back (while it
    /// waits, no other request waits: no two wait for each other).
    async fn grow_to(&mut self, bytes: usize) -> Result<(), RequestRefusal> {
        if bytes <= self.held_for {
            return Ok(());
        }
        let more = pieces_for(bytes) - pieces_for(self.held_for);
        let pieces = self.memory.pieces.clone();
        let permit = if bytes <= UNWAITED_BYTES {
            pieces
                .try_acquire_many_owned(more)
                .map_err(|_| RequestRefusal::Overloaded)?
        } else {
            if self.large.is_none() {
                let turn = self.memory.growing.clone().acquire_owned();
                self.large = Some(
                    tokio::time::timeout(WAIT_FOR_MEMORY, turn)
                        .await
                        .map_err(|_| RequestRefusal::Overloaded)?
                        .map_err(|_| RequestRefusal::Overloaded)?,
                );
            }
            tokio::time::timeout(WAIT_FOR_MEMORY, pieces.acquire_many_owned(more))
                .await
                .map_err(|_| RequestRefusal::Overloaded)?
                .map_err(|_| RequestRefusal::Overloaded)?
        };
        self.held.push(permit);
        self.held_for = bytes;
        Ok(())
    }
}

fn pieces_for(bytes: usize) -> u32 {
    u32::try_from((bytes * HELD_PER_BYTE).div_ceil(PIECE_BYTES)).unwrap_or(u32::MAX)
}

impl RequestMemory {
    /// Memory of `bytes` for requests to share.
    pub fn new(bytes: usize) -> Self {
        RequestMemory {
            pieces: Arc::new(Semaphore::new(bytes.div_ceil(PIECE_BYTES))),
            growing: Arc::new(Semaphore::new(1)),
        }
    }

    /// Reads `body`, whose headers declare `declared_length` (if they do).
    pub async fn read(
        &self,
        body: Body,
        declared_length: Option<usize>,
    ) -> Result<ReadRequest, RequestRefusal> {
        if declared_length.is_some_and(|length| length > LARGEST_REQUEST_BYTES) {
            return Err(RequestRefusal::TooLarge);
        }
        let mut share = Share {
            memory: self,
            held: Vec::new(),
            held_for: 0,
            large: None,
        };
        if let Some(length) = declared_length {
            share.grow_to(length).await?;
        }
        let mut stream = body.into_data_stream();
        let mut bytes = BytesMut::with_capacity(declared_length.unwrap_or(0));
        while let Some(piece) = stream.next().await {
            let piece = piece.map_err(|error| RequestRefusal::BrokeOff(error.to_string()))?;
            if bytes.len() + piece.len() > LARGEST_REQUEST_BYTES {
                return Err(RequestRefusal::TooLarge);
            }
            bytes.extend_from_slice(&piece);
            share.grow_to(bytes.len()).await?;
        }
        Ok(ReadRequest {
            body: bytes.freeze(),
            _held: share.held,
        })
    }

    /// The bytes not held by any request now.
    pub fn free_bytes(&self) -> usize {
        self.pieces.available_permits() * PIECE_BYTES / HELD_PER_BYTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_larger_than_a_model_call_is_refused_before_it_is_read() {
        let memory = RequestMemory::default();
        let refused = memory
            .read(Body::from(vec![0_u8; 10]), Some(LARGEST_REQUEST_BYTES + 1))
            .await;
        assert_eq!(refused.unwrap_err(), RequestRefusal::TooLarge);
        let chunked = memory
            .read(Body::from(vec![b'x'; LARGEST_REQUEST_BYTES + 1]), None)
            .await;
        assert_eq!(chunked.unwrap_err(), RequestRefusal::TooLarge);
        assert_eq!(
            memory.free_bytes(),
            RequestMemory::default().free_bytes(),
            "a refused request gives its share back"
        );
    }

    #[tokio::test]
    async fn requests_hold_their_share_until_dropped_and_the_rest_are_refused() {
        let memory = RequestMemory::new(3 * 1024 * 1024);
        let first = memory
            .read(Body::from(vec![b'a'; 600 * 1024]), Some(600 * 1024))
            .await
            .unwrap();
        assert_eq!(first.body.len(), 600 * 1024);
        let chunked = memory.read(Body::from(vec![b'b'; 600 * 1024]), None).await;
        assert_eq!(chunked.unwrap_err(), RequestRefusal::Overloaded);
        drop(first);
        assert!(memory
            .read(Body::from(vec![b'b'; 600 * 1024]), None)
            .await
            .is_ok());
    }
}
