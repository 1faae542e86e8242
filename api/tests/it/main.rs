//! The application API's tests: the contract the page relies on (records in its casing,
//! enum words, codes instead of messages), and following the mirror for an open window.

mod mirror_following;
mod page_contract;
