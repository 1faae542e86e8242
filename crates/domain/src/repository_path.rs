//! A path a repository's file names, written relative to that file's folder (as dev
//! containers and Compose files write them), as a path from the repository's root; none
//! when it leaves the repository.

/// `path`, relative to the folder `file` is in, from the repository's root (`.` for the
/// root itself); `None` for an absolute path or one that climbs out.
pub fn beside_file(file: &str, path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let folder = file.rsplit_once('/').map_or("", |(folder, _)| folder);
    let mut parts: Vec<&str> = folder
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_read_from_its_files_folder_and_may_not_climb_out() {
        assert_eq!(
            beside_file(".devcontainer/devcontainer.json", "Dockerfile").as_deref(),
            Some(".devcontainer/Dockerfile")
        );
        assert_eq!(
            beside_file(".devcontainer/devcontainer.json", "..").as_deref(),
            Some(".")
        );
        assert_eq!(
            beside_file(".handoff/services.yml", "./services/web/").as_deref(),
            Some(".handoff/services/web")
        );
        assert_eq!(
            beside_file("./.", "Dockerfile").as_deref(),
            Some("Dockerfile")
        );
        assert_eq!(beside_file(".devcontainer.json", "../outside"), None);
        assert_eq!(beside_file(".handoff/services.yml", "/etc"), None);
    }
}
