//! What the shell holds for the lifetime of the window: the core (store, data folder,
//! keyring), or the coded error that kept the store from opening (shown by the page,
//! never a crash: a damaged or newer database must be explained, not hidden).

use std::path::PathBuf;

use handoff::app_commands::AppCore;
use handoff::data_dir::data_dir;
use handoff::error_code::{CodedError, ErrorCode};
use handoff::Store;

pub struct DesktopState {
    pub data_dir: PathBuf,
    pub core: Result<AppCore, CodedError>,
}

impl DesktopState {
    pub async fn open() -> DesktopState {
        let data_dir = match data_dir() {
            Ok(dir) => dir,
            Err(error) => {
                return DesktopState {
                    data_dir: PathBuf::new(),
                    core: Err(CodedError {
                        code: ErrorCode::DataFolder,
                        message: error.to_string(),
                    }),
                }
            }
        };
        let core = Store::open_in(&data_dir)
            .await
            .map(|store| AppCore::new(store, &data_dir))
            .map_err(CodedError::from);
        DesktopState { data_dir, core }
    }

    pub fn core(&self) -> Result<&AppCore, CodedError> {
        self.core.as_ref().map_err(Clone::clone)
    }

    pub fn store(&self) -> Result<&Store, CodedError> {
        self.core().map(|core| &core.store)
    }
}
