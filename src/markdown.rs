//! Markdown from GitHub, agents and visitors, rendered to HTML and sanitized here, in
//! Rust, before it reaches the webview (S1): no scripts, no event handlers, no styles,
//! no images (the page's policy would refuse them anyway), links only to http(s) and
//! mail, each marked to open outside the app.

use pulldown_cmark::{html, Options, Parser};

/// Safe HTML for `text`.
pub fn render_markdown(text: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut unsafe_html = String::new();
    html::push_html(&mut unsafe_html, Parser::new_ext(text, options));
    ammonia::Builder::default()
        .rm_tags(["img"])
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("noopener noreferrer"))
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        .add_tags(["input"])
        .clean(&unsafe_html)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_html() {
        let html = render_markdown(
            "## Findings\n\n- **bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |",
        );
        assert!(html.contains("<h2>Findings</h2>"), "{html}");
        assert!(html.contains("<strong>bold</strong>"), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }

    #[test]
    fn nothing_active_survives() {
        let hostile = "<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
                       [click](javascript:alert(3)) <a href=\"https://ok.example\" onclick=\"x()\">ok</a>\n\n\
                       <div style=\"position:fixed\">overlay</div><iframe src=\"https://evil\"></iframe>";
        let html = render_markdown(hostile);
        for banned in [
            "<script",
            "onerror",
            "javascript:",
            "onclick",
            "<iframe",
            "style=",
            "<img",
        ] {
            assert!(!html.contains(banned), "{banned} survived: {html}");
        }
        assert!(html.contains("href=\"https://ok.example\""), "{html}");
        assert!(html.contains("rel=\"noopener noreferrer\""), "{html}");
    }
}
