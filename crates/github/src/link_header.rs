//! GitHub's pagination: the `Link` header's `rel="next"` URL (so all pages are read).

/// The URL marked `rel="next"` in a `Link` header, if any.
pub fn next_page_url(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (target, parameters) = part.split_once(';')?;
        let is_next = parameters
            .split(';')
            .any(|parameter| parameter.trim().replace(' ', "") == "rel=\"next\"");
        let target = target.trim();
        (is_next && target.starts_with('<') && target.ends_with('>'))
            .then(|| target[1..target.len() - 1].to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_next_page_among_the_others() {
        let link = "<https://api.github.com/repositories/1/issues/7/comments?page=1>; rel=\"prev\", \
                    <https://api.github.com/repositories/1/issues/7/comments?page=3>; rel=\"next\", \
                    <https://api.github.com/repositories/1/issues/7/comments?page=5>; rel=\"last\"";
        assert_eq!(
            next_page_url(link).as_deref(),
            Some("https://api.github.com/repositories/1/issues/7/comments?page=3")
        );
        assert_eq!(next_page_url("<https://x/?page=1>; rel=\"prev\""), None);
        assert_eq!(next_page_url("garbage"), None);
    }
}
