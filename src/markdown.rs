//! Markdown from GitHub, agents and visitors, rendered to HTML and sanitized here, in
//! Rust, before it reaches the webview: no scripts, no event handlers, no styles, no
//! images (the page's policy would refuse them anyway), links only to whole http(s) and
//! mail addresses,
//! each marked to open outside the app, and no form fields but the disabled checkboxes
//! of task lists.

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
        // A relative address would point into the app itself (a base tag cannot be
        // trusted either): only whole addresses survive.
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        // Task lists render as `<input type="checkbox" disabled>`; any other input a text
        // carries (a text field, a button, a file picker) becomes such a checkbox too.
        .add_tags(["input"])
        .add_tag_attributes("input", ["checked"])
        .set_tag_attribute_value("input", "type", "checkbox")
        .set_tag_attribute_value("input", "disabled", "")
        .clean(&unsafe_html)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_lose_their_address() {
        let html = render_markdown("[here](relative/page) and [there](/root) and [on](#top)");
        assert!(!html.contains("href"), "{html}");
        assert!(html.contains("here"), "{html}");
        let kept = render_markdown("[docs](https://example.org/docs)");
        assert!(kept.contains("href=\"https://example.org/docs\""), "{kept}");
    }

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

    #[test]
    fn only_disabled_checkboxes_survive_of_form_fields() {
        let html = render_markdown(
            "- [x] done\n- [ ] open\n\n<input type=\"text\" value=\"token?\" name=\"q\">\
             <input type=\"file\"><input type=\"image\" src=\"https://x\"><input type=submit formaction=\"https://x\">",
        );
        let inputs: Vec<&str> = html
            .match_indices("<input")
            .map(|(at, _)| &html[at..at + html[at..].find('>').unwrap() + 1])
            .collect();
        assert_eq!(inputs.len(), 6, "{html}");
        for input in &inputs {
            assert!(input.contains("type=\"checkbox\""), "{input} in {html}");
            assert!(input.contains("disabled"), "{input}");
            for banned in [
                "text",
                "file",
                "image",
                "submit",
                "value=",
                "name=",
                "src=",
                "formaction",
            ] {
                assert!(!input.contains(banned), "{banned} survived in {input}");
            }
        }
        assert_eq!(html.matches("checked").count(), 1, "{html}");
    }
}
