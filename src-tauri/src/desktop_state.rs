//! What the shell holds for the lifetime of the window: the data folder and the store,
//! or the coded error that kept the store from opening (shown by the page, never a
//! crash: a damaged or newer database must be explained, not hidden).

use std::path::PathBuf;

use handoff::data_dir::data_dir;
use handoff::error_code::{CodedError, ErrorCode};
use handoff::Store;

pub struct DesktopState {
    pub data_dir: PathBuf,
    pub store: Result<Store, CodedError>,
}

impl DesktopState {
    pub async fn open() -> DesktopState {
        let data_dir = match data_dir() {
            Ok(dir) => dir,
            Err(error) => {
                return DesktopState {
                    data_dir: PathBuf::new(),
                    store: Err(CodedError {
                        code: ErrorCode::DataFolder,
                        message: error.to_string(),
                    }),
                }
            }
        };
        let store = Store::open_in(&data_dir).await.map_err(CodedError::from);
        DesktopState { data_dir, store }
    }

    pub fn store(&self) -> Result<&Store, CodedError> {
        self.store.as_ref().map_err(Clone::clone)
    }
}
