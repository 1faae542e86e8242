//! WebKit's compositing on machines without a GPU. Without a render node WebKitGTK
//! composites in software, which on this app's pages costs about 100 MB more memory in
//! its web process and a slower first paint, for nothing the pages need
//! (`benches/results/app_start.md`). So on such a machine the app turns it off, unless
//! the owner chose otherwise with `WEBKIT_DISABLE_COMPOSITING_MODE` (`0` keeps it on).

/// The variable WebKitGTK reads.
const VARIABLE: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Whether this machine has a GPU render node.
fn has_render_node() -> bool {
    std::fs::read_dir("/dev/dri")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .any(|entry| entry.file_name().to_string_lossy().starts_with("renderD"))
        })
        .unwrap_or(false)
}

/// Turns WebKit's compositing off when there is no GPU and the owner set nothing. Must
/// run first in `main`, before any thread starts.
pub fn turn_off_without_gpu() {
    if cfg!(target_os = "linux") && std::env::var_os(VARIABLE).is_none() && !has_render_node() {
        std::env::set_var(VARIABLE, "1");
    }
}
