//! The application API's tests: the contract the page relies on (records in its casing,
//! enum words, codes instead of messages), following the mirror for an open window, and
//! the use cases both front ends share.

mod keys;
mod lessons;
mod mirror_following;
mod page_contract;
mod repository_settings;
mod spend;
mod use_cases;
