//! How long rendering and sanitizing a managed comment takes (`render_markdown`: markdown
//! to HTML with pulldown-cmark, then ammonia), for comments of 60,000 characters, the
//! size of the longest stage outputs GitHub keeps (a comment holds at most 65,536):
//!
//! - a test plan as an agent writes one: headings, scenario lists, task lists, tables,
//!   code blocks, links and inline code;
//! - the same length of hostile text: raw HTML tags, event handlers, `javascript:` links
//!   and images in every line, so that the sanitizer has the most to remove.
//!
//! Each figure is the median (and the slowest) of 200 renders after 20 to warm up.
//!
//! Run: `cargo bench --bench markdown_render`. Figures: benches/results/markdown_render.md.

use std::time::{Duration, Instant};

use handoff::markdown::render_markdown;

const LENGTH: usize = 60_000;

/// A test plan of `LENGTH` characters.
fn test_plan() -> String {
    let mut text = String::from("<!-- sandbox-qa-plan -->\n# 🧪 QA test plan\n\n");
    let mut scenario = 1;
    while text.chars().count() < LENGTH {
        text.push_str(&format!(
            "## Scenario {scenario}: the signup button on a narrow screen\n\n\
             Checks that the **signup** button stays reachable at `360px` wide, as the \
             [issue](https://github.com/octocat/hello-world/issues/{scenario}) asks.\n\n\
             - [ ] Open `/signup` at 360 × 640\n\
             - [x] The button is at least *44 px* tall\n\
             - [ ] Tapping it opens the form\n\n\
             | step | expected | seen |\n|---|---|---|\n\
             | load the page | the button shows | ✅ |\n\
             | tap the button | the form opens | ❌ |\n\n\
             ```sh\nnpx playwright test signup.spec.ts --project=mobile\n```\n\n\
             > Evidence: `screenshots/signup-{scenario}.png`, log line 42.\n\n"
        ));
        scenario += 1;
    }
    text.chars().take(LENGTH).collect()
}

/// Hostile text of `LENGTH` characters.
fn hostile() -> String {
    let mut text = String::new();
    let mut line = 1;
    while text.chars().count() < LENGTH {
        text.push_str(&format!(
            "<div onclick=\"steal({line})\" style=\"position:fixed\">line {line}</div> \
             <script>alert({line})</script> [click](javascript:alert({line})) \
             ![x](https://tracker.example/{line}.png) <iframe src=\"https://evil.example\"></iframe> \
             <a href=\"data:text/html,<script>1</script>\">data</a> &lt;b&gt; **bold**\n\n"
        ));
        line += 1;
    }
    text.chars().take(LENGTH).collect()
}

/// The median and the slowest of 200 renders of `text`, and the HTML's length.
fn measure(text: &str) -> (Duration, Duration, usize) {
    for _ in 0..20 {
        std::hint::black_box(render_markdown(text));
    }
    let mut times = Vec::with_capacity(200);
    let mut length = 0;
    for _ in 0..200 {
        let started = Instant::now();
        let html = render_markdown(std::hint::black_box(text));
        times.push(started.elapsed());
        length = html.len();
    }
    times.sort_unstable();
    (times[times.len() / 2], times[times.len() - 1], length)
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn main() {
    println!("## Markdown render and sanitize, 60,000 characters\n");
    println!("| comment | median | slowest of 200 | HTML out |");
    println!("|---|---|---|---|");
    for (name, text) in [
        ("a test plan (headings, lists, tables, code)", test_plan()),
        (
            "hostile text (tags, handlers, scripts in every line)",
            hostile(),
        ),
    ] {
        let (median, slowest, length) = measure(&text);
        println!(
            "| {name} | {} | {} | {length} bytes |",
            milliseconds(median),
            milliseconds(slowest)
        );
    }
}
