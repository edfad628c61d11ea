//! Agent text as markdown (CommonMark with the GFM tables, strikethrough, task lists and
//! autolinks), turned into a small tree of safe nodes that the UI builds DOM from. Nothing here
//! is HTML: raw HTML in the source stays literal text, and the only live things are links to
//! `http:`, `https:` and `mailto:` addresses and images that load when asked.
//!
//! A link to any other scheme (`javascript:`, `data:`, `vbscript:`, however encoded) and an
//! image that is not `http(s)` are shown as the markdown that was written, so the text stays
//! readable and nothing can run.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Column alignment of a table cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    None,
    Left,
    Center,
    Right,
}

/// The kinds of element a markdown tree is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    P,
    H(u8),
    Quote,
    Ul,
    /// An ordered list starting at this number.
    Ol(u64),
    Li,
    Em,
    Strong,
    Del,
    Table,
    Head,
    Row,
    Th(Align),
    Td(Align),
    /// Footnotes, definition lists and other rare blocks: their text, in a plain block.
    Div,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MdNode {
    Text(String),
    El(Kind, Vec<MdNode>),
    /// A link to an `http(s)` or `mailto` address. `host` is shown on hover and focus, so the
    /// destination is never a surprise.
    Link {
        href: String,
        host: String,
        children: Vec<MdNode>,
    },
    /// An `http(s)` image: not fetched until the person asks (an agent could plant a tracking
    /// pixel), shown meanwhile as its alt text and host.
    Image {
        src: String,
        alt: String,
        host: String,
    },
    CodeBlock {
        lang: String,
        code: String,
    },
    Code(String),
    /// A task list item's box.
    Task(bool),
    Rule,
    Break,
}

/// The address as the browser would use it (ASCII whitespace and control characters dropped,
/// as URL parsing does), if its scheme is one we link to.
pub fn safe_url(dest: &str) -> Option<String> {
    let cleaned: String = dest.chars().filter(|c| !(c.is_ascii_whitespace() || c.is_ascii_control())).collect();
    let lower = cleaned.to_ascii_lowercase();
    let ok = ["http://", "https://", "mailto:"].iter().any(|s| lower.starts_with(s)) && cleaned.len() > "mailto:".len();
    ok.then_some(cleaned)
}

use crate::url::{display_host, host_of};

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_GFM
}

/// Bare `http://` and `https://` addresses in text become links (GFM's autolinks).
fn linkify(text: &str, out: &mut Vec<MdNode>) {
    let mut rest = text;
    while let Some(at) = ["https://", "http://"].iter().filter_map(|p| rest.find(p)).min() {
        let (before, from) = rest.split_at(at);
        let end = from.find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"')).unwrap_or(from.len());
        // Trailing punctuation belongs to the sentence, not the address.
        let url = from[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', ']']);
        if url.len() <= "https://".len() {
            push_text(out, &rest[..at + end.max(1)]);
            rest = &rest[at + end.max(1)..];
            continue;
        }
        push_text(out, before);
        out.push(MdNode::Link { href: url.to_string(), host: display_host(&host_of(url)), children: vec![MdNode::Text(url.to_string())] });
        rest = &from[url.len()..];
    }
    push_text(out, rest);
}

fn push_text(out: &mut Vec<MdNode>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(MdNode::Text(last)) = out.last_mut() {
        last.push_str(text);
    } else {
        out.push(MdNode::Text(text.to_string()));
    }
}

/// The text inside a tag, up to its end (for image alt text, code blocks and HTML blocks).
fn text_until_end<'a>(events: &mut impl Iterator<Item = (Event<'a>, std::ops::Range<usize>)>) -> String {
    let mut depth = 0usize;
    let mut text = String::new();
    for (ev, _) in events.by_ref() {
        match ev {
            Event::Start(_) => depth += 1,
            Event::End(_) if depth == 0 => break,
            Event::End(_) => depth -= 1,
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak => text.push('\n'),
            _ => {}
        }
    }
    text
}

struct Frame {
    el: Option<Kind>,
    link: Option<(String, String)>,
    children: Vec<MdNode>,
}

/// Parses `src` into nodes. Every character of agent text ends up as text, a safe element,
/// or the literal markdown of something that was not made live.
pub fn parse(src: &str) -> Vec<MdNode> {
    let mut stack = vec![Frame { el: None, link: None, children: Vec::new() }];
    let mut aligns: Vec<Alignment> = Vec::new();
    let mut in_head = false;
    let mut cell = 0usize;
    let mut events = Parser::new_ext(src, options()).into_offset_iter();
    while let Some((ev, range)) = events.next() {
        let top = stack.last_mut().expect("the root frame stays");
        match ev {
            Event::Start(tag) => {
                let el = match tag {
                    Tag::Link { dest_url, .. } => {
                        match safe_url(&dest_url) {
                            Some(href) => {
                                let host = display_host(&host_of(&href));
                                stack.push(Frame { el: None, link: Some((href, host)), children: Vec::new() });
                            }
                            None => {
                                let _ = text_until_end(&mut events);
                                push_text(&mut top.children, &src[range]);
                            }
                        }
                        continue;
                    }
                    Tag::Image { dest_url, .. } => {
                        let alt = text_until_end(&mut events);
                        match safe_url(&dest_url).filter(|u| !u.to_ascii_lowercase().starts_with("mailto:")) {
                            Some(url) => top.children.push(MdNode::Image { host: display_host(&host_of(&url)), src: url, alt }),
                            None => push_text(&mut top.children, &src[range]),
                        }
                        continue;
                    }
                    Tag::CodeBlock(kind) => {
                        let lang = match kind {
                            CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_string(),
                            CodeBlockKind::Indented => String::new(),
                        };
                        let code = text_until_end(&mut events);
                        top.children.push(MdNode::CodeBlock { lang, code });
                        continue;
                    }
                    Tag::HtmlBlock => {
                        let raw = text_until_end(&mut events);
                        top.children.push(MdNode::El(Kind::P, vec![MdNode::Text(raw.trim_end_matches('\n').to_string())]));
                        continue;
                    }
                    Tag::MetadataBlock(_) => {
                        let raw = text_until_end(&mut events);
                        top.children.push(MdNode::CodeBlock { lang: String::new(), code: raw });
                        continue;
                    }
                    Tag::Paragraph => Kind::P,
                    Tag::Heading { level, .. } => Kind::H(level as u8),
                    Tag::BlockQuote(_) => Kind::Quote,
                    Tag::List(Some(start)) => Kind::Ol(start),
                    Tag::List(None) => Kind::Ul,
                    Tag::Item => Kind::Li,
                    Tag::Emphasis => Kind::Em,
                    Tag::Strong => Kind::Strong,
                    Tag::Strikethrough => Kind::Del,
                    Tag::Table(a) => {
                        aligns = a;
                        Kind::Table
                    }
                    Tag::TableHead => {
                        in_head = true;
                        cell = 0;
                        Kind::Head
                    }
                    Tag::TableRow => {
                        cell = 0;
                        Kind::Row
                    }
                    Tag::TableCell => {
                        let align = match aligns.get(cell) {
                            Some(Alignment::Left) => Align::Left,
                            Some(Alignment::Center) => Align::Center,
                            Some(Alignment::Right) => Align::Right,
                            _ => Align::None,
                        };
                        cell += 1;
                        if in_head { Kind::Th(align) } else { Kind::Td(align) }
                    }
                    _ => Kind::Div,
                };
                stack.push(Frame { el: Some(el), link: None, children: Vec::new() });
            }
            Event::End(end) => {
                if end == TagEnd::TableHead {
                    in_head = false;
                }
                if stack.len() == 1 {
                    continue; // an end without its start: nothing to close
                }
                let frame = stack.pop().expect("more than the root");
                let node = match (frame.el, frame.link) {
                    (_, Some((href, host))) => MdNode::Link { href, host, children: frame.children },
                    (Some(el), None) => MdNode::El(el, frame.children),
                    (None, None) => MdNode::El(Kind::Div, frame.children),
                };
                stack.last_mut().expect("the root frame stays").children.push(node);
            }
            Event::Text(t) => {
                if top.link.is_some() {
                    push_text(&mut top.children, &t);
                } else {
                    linkify(&t, &mut top.children);
                }
            }
            Event::Code(c) => top.children.push(MdNode::Code(c.to_string())),
            Event::Html(h) | Event::InlineHtml(h) => push_text(&mut top.children, &h),
            Event::InlineMath(_) | Event::DisplayMath(_) | Event::FootnoteReference(_) => push_text(&mut top.children, &src[range]),
            Event::SoftBreak => push_text(&mut top.children, "\n"),
            Event::HardBreak => top.children.push(MdNode::Break),
            Event::Rule => top.children.push(MdNode::Rule),
            Event::TaskListMarker(done) => top.children.push(MdNode::Task(done)),
        }
    }
    // Unclosed frames (not produced by pulldown-cmark, but cheap to be sure of): fold them in.
    while stack.len() > 1 {
        let frame = stack.pop().expect("more than the root");
        stack.last_mut().expect("the root frame stays").children.extend(frame.children);
    }
    stack.pop().map(|f| f.children).unwrap_or_default()
}

/// `src` when it is one paragraph of plain prose, which [`parse`] would turn into exactly
/// `[El(P, [Text(src)])]`: one line of text with none of the characters that open or close an
/// inline element or an entity anywhere (`` \ ` * _ [ ] < & ~ ``), no block marker at its start
/// (`# > - + =`, a list number, an indent), and no bare address (`://`, which becomes a link).
/// Most short replies ("Done!", "You said: yes") are such a line; the UI shows them at once,
/// without loading the markdown module.
///
/// It errs towards `None`: a message it refuses is only rendered a moment later, while one it
/// wrongly accepted would show its markdown as written (a property test holds it to [`parse`]).
pub fn plain_paragraph(src: &str) -> Option<&str> {
    const INLINE: &str = "\\`*_[]<&~";
    const BLOCK_START: &str = "#>-+=";
    let first = src.chars().next()?;
    let last = src.chars().next_back()?;
    let plain = !first.is_ascii_digit()
        && !first.is_whitespace()
        && !BLOCK_START.contains(first)
        && !last.is_whitespace()
        && !src.contains("://")
        && src.chars().all(|c| !c.is_control() && !INLINE.contains(c) && (c == ' ' || !c.is_whitespace()));
    plain.then_some(src)
}

/// What [`parse`] returns for `src`, when that is known without the parser: nothing for a blank
/// text (a tool call's empty text part), one paragraph for [`plain_paragraph`] prose (with any
/// trailing spaces and line ends, as a reply being streamed has).
pub fn parse_without_parser(src: &str) -> Option<Vec<MdNode>> {
    if src.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r')) {
        return Some(Vec::new());
    }
    // A paragraph's trailing spaces and line ends are not its text (a streamed reply often ends
    // with one).
    plain_paragraph(src.trim_end_matches([' ', '\n'])).map(|p| vec![MdNode::El(Kind::P, vec![MdNode::Text(p.to_string())])])
}

/// All the text of `nodes`, as a person reads it (tests and accessibility checks).
pub fn plain_text(nodes: &[MdNode]) -> String {
    let mut out = String::new();
    for n in nodes {
        match n {
            MdNode::Text(t) | MdNode::Code(t) => out.push_str(t),
            MdNode::El(_, c) | MdNode::Link { children: c, .. } => out.push_str(&plain_text(c)),
            MdNode::Image { alt, .. } => out.push_str(alt),
            MdNode::CodeBlock { code, .. } => out.push_str(code),
            MdNode::Task(_) | MdNode::Rule | MdNode::Break => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use MdNode::*;

    fn t(s: &str) -> MdNode {
        Text(s.into())
    }

    #[test]
    fn paragraphs_emphasis_lists_and_code_map_to_elements() {
        assert_eq!(
            parse("Hello **world** and *you*"),
            vec![El(Kind::P, vec![t("Hello "), El(Kind::Strong, vec![t("world")]), t(" and "), El(Kind::Em, vec![t("you")])])]
        );
        assert_eq!(
            parse("- one\n- two\n\n3. three"),
            vec![
                El(Kind::Ul, vec![El(Kind::Li, vec![t("one")]), El(Kind::Li, vec![t("two")])]),
                El(Kind::Ol(3), vec![El(Kind::Li, vec![t("three")])]),
            ]
        );
        assert_eq!(
            parse("```rust\nfn main() {}\n    indented\n```"),
            vec![CodeBlock { lang: "rust".into(), code: "fn main() {}\n    indented\n".into() }]
        );
        assert_eq!(parse("use `cargo test`"), vec![El(Kind::P, vec![t("use "), Code("cargo test".into())])]);
        assert_eq!(parse("~~gone~~"), vec![El(Kind::P, vec![El(Kind::Del, vec![t("gone")])])]);
        assert_eq!(parse("# Title"), vec![El(Kind::H(1), vec![t("Title")])]);
        assert_eq!(parse("line one\nline two"), vec![El(Kind::P, vec![t("line one\nline two")])], "line breaks are kept");
    }

    #[test]
    fn tables_and_task_lists_follow_gfm() {
        let md = "| Name | Size |\n|:-----|-----:|\n| a | 1 |";
        assert_eq!(
            parse(md),
            vec![El(
                Kind::Table,
                vec![
                    El(Kind::Head, vec![El(Kind::Th(Align::Left), vec![t("Name")]), El(Kind::Th(Align::Right), vec![t("Size")])]),
                    El(Kind::Row, vec![El(Kind::Td(Align::Left), vec![t("a")]), El(Kind::Td(Align::Right), vec![t("1")])]),
                ]
            )]
        );
        assert_eq!(
            parse("- [x] done\n- [ ] todo"),
            vec![El(Kind::Ul, vec![El(Kind::Li, vec![Task(true), t("done")]), El(Kind::Li, vec![Task(false), t("todo")])])]
        );
    }

    #[test]
    fn only_http_https_and_mailto_become_links_and_show_their_host() {
        assert_eq!(
            parse("[docs](https://docs.openclaw.ai/tools/ask-user)"),
            vec![El(
                Kind::P,
                vec![Link {
                    href: "https://docs.openclaw.ai/tools/ask-user".into(),
                    host: "docs.openclaw.ai".into(),
                    children: vec![t("docs")]
                }]
            )]
        );
        assert_eq!(
            parse("<mailto:ops@example.com>"),
            vec![El(
                Kind::P,
                vec![Link {
                    href: "mailto:ops@example.com".into(),
                    host: "example.com".into(),
                    children: vec![t("mailto:ops@example.com")]
                }]
            )]
        );
        for md in [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](jav&#x61;script:alert(1))",
            "[x](&#106;avascript:alert(1))",
            "[x](java\tscript:alert(1))",
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "[x](vbscript:msgbox(1))",
            "[x](/relative/path)",
            "[x][ref]\n\n[ref]: javascript:alert(1)",
        ] {
            let nodes = parse(md);
            let flat = format!("{nodes:?}");
            assert!(!flat.contains("Link"), "{md} is no link: {flat}");
            assert!(plain_text(&nodes).contains("[x]"), "{md} stays readable as written: {}", plain_text(&nodes));
        }
    }

    #[test]
    fn bare_addresses_become_links_without_their_trailing_punctuation() {
        assert_eq!(
            parse("See https://example.com/a?b=1. Thanks"),
            vec![El(
                Kind::P,
                vec![
                    t("See "),
                    Link {
                        href: "https://example.com/a?b=1".into(),
                        host: "example.com".into(),
                        children: vec![t("https://example.com/a?b=1")]
                    },
                    t(". Thanks")
                ]
            )]
        );
        assert_eq!(parse("not a link: https://"), vec![El(Kind::P, vec![t("not a link: https://")])]);
        assert_eq!(parse("`https://in.code`"), vec![El(Kind::P, vec![Code("https://in.code".into())])], "not inside code");
    }

    #[test]
    fn plain_paragraph_accepts_only_what_parses_to_one_plain_paragraph() {
        for src in [
            "Done.",
            "Done!",
            "You said: hello origin",
            "Sure, I'll check the logs (and the config) now?",
            "Ünïcödé text, 2 apples; 100% \"quoted\"",
            "a  b",
            "well-known a + b = c, a | b, 50% #1 > #2 @ops {x} $5 ^",
        ] {
            assert_eq!(plain_paragraph(src), Some(src), "{src:?} is plain");
            assert_eq!(parse(src), vec![El(Kind::P, vec![t(src)])], "{src:?}");
        }
        for src in [
            "",
            " leading",
            "trailing ",
            "1. a list",
            "2) a list",
            "two\nlines",
            "tab\there",
            "**bold**",
            "a_b",
            "see https://example.com",
            "a &amp; b",
            "<b>",
            "- item",
            "# head",
            "x\u{0}y",
            "non\u{a0}breaking",
            "> quoted",
            "+ item",
            "=== not a heading on its own, but refused",
            "a ~~gone~~ b",
            "x [link](y) z",
            "use `code` here",
            "a &amp; b",
            "<mailto:ops@example.com>",
        ] {
            assert_eq!(plain_paragraph(src), None, "{src:?} is not plain");
        }
        for blank in ["", " ", "\n\n", " \t\r\n"] {
            assert_eq!(parse_without_parser(blank), Some(vec![]), "{blank:?} is nothing");
        }
        assert_eq!(parse_without_parser("\u{a0}"), None, "a no-break space is not blank to markdown");
        assert_eq!(parse_without_parser("You said: \n"), Some(vec![El(Kind::P, vec![t("You said:")])]), "a streamed reply's end");
    }

    /// Text made of words, spaces and every kind of character markdown gives a meaning to, so
    /// that pairs like `*a*` or `[a](b)` come up often.
    fn markdownish() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        const PIECES: &[&str] = &[
            "a", "b c", "word", " ", "  ", "*", "_", "`", "[", "]", "(", ")", "<", ">", "!", "#", "|", "~", "&", "-", "+", "=", ":", "\\",
            "1", ".", "\n", "\t", "\u{a0}", "é", "http", "s://x.y", "//", "amp;", "{", "$", "^", "@", "\u{0}", "\"", "'", "---", "| - |",
        ];
        proptest::collection::vec(proptest::sample::select(PIECES), 0..12).prop_map(|v| v.concat())
    }

    const PLAIN_CASES: u32 = 4096;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(PLAIN_CASES))]
        /// Whatever `plain_paragraph` accepts parses to exactly one paragraph of that text, so
        /// showing it without the markdown module shows what the module would.
        #[test]
        fn what_plain_paragraph_accepts_parses_to_itself(src in markdownish()) {
            if plain_paragraph(&src).is_some() {
                proptest::prop_assert_eq!(parse(&src), vec![El(Kind::P, vec![t(&src)])]);
            }
            if let Some(nodes) = parse_without_parser(&src) {
                proptest::prop_assert_eq!(parse(&src), nodes);
            }
        }
    }

    #[test]
    fn raw_html_stays_literal_text() {
        assert_eq!(parse("<script>alert(1)</script>"), vec![El(Kind::P, vec![t("<script>alert(1)</script>")])]);
        assert_eq!(parse("a <img src=x onerror=alert(1)> b"), vec![El(Kind::P, vec![t("a <img src=x onerror=alert(1)> b")])]);
        assert_eq!(plain_text(&parse("<div onclick=\"x()\">\n\nhi\n</div>")), "<div onclick=\"x()\">hi</div>");
    }

    #[test]
    fn images_are_placeholders_until_asked_and_other_schemes_stay_text() {
        assert_eq!(
            parse("![a chart](https://img.example.net/c.png)"),
            vec![El(
                Kind::P,
                vec![Image { src: "https://img.example.net/c.png".into(), alt: "a chart".into(), host: "img.example.net".into() }]
            )]
        );
        for md in ["![x](javascript:alert(1))", "![x](data:image/svg+xml,<svg onload=alert(1)>)", "![x](/local.png)"] {
            let nodes = parse(md);
            assert!(!format!("{nodes:?}").contains("Image"), "{md}");
            assert!(plain_text(&nodes).contains("![x]"), "{md}");
        }
    }
}
