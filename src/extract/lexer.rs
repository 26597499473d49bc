//! An HTML tokenizer for the streaming pass: tags with the four attributes
//! extraction reads (`id`, `class`, `style`, `hidden`), text, doctypes;
//! comments skipped. Borrowed slices of the page, no allocation unless a
//! name has upper case or a value has a character reference.
//!
//! It follows the HTML standard's tokenizer for what exists on real pages:
//! quoted and unquoted attribute values, comments (including `<!-->`),
//! bogus comments (`<?...>`, `</ ...>`, `<!...>`), doctypes, raw text
//! elements (`script`, `style`, `textarea`, `title`, `xmp`, `iframe`,
//! `noembed`, `noframes`, `noscript`, `plaintext`), CDATA in SVG and
//! MathML, a tag cut off by the end of the page (dropped). It does not
//! report parse errors, nor follow the script-data escape states
//! (`<!--<script>` inside a script).

use std::borrow::Cow;

use memchr::memchr;

use super::stream::decode_entities as value;

/// One token.
#[derive(Debug, PartialEq)]
pub(crate) enum Token<'a> {
    /// A start tag.
    Start(Tag<'a>),
    /// An end tag's name (lower case).
    End(Cow<'a, str>),
    /// Text as written; `decode` tells whether its character references
    /// are parsed (not in scripts, styles and other raw text).
    Text { text: &'a str, decode: bool },
    /// A doctype.
    Doctype {
        name: Option<&'a str>,
        public_id: Option<&'a str>,
        system_id: bool,
    },
}

/// A start tag.
#[derive(Debug, PartialEq, Default)]
pub(crate) struct Tag<'a> {
    /// Lower case.
    pub name: Cow<'a, str>,
    pub id: Option<Cow<'a, str>>,
    pub class: Option<Cow<'a, str>>,
    pub style: Option<Cow<'a, str>>,
    pub hidden: bool,
    pub self_closing: bool,
}

/// How the text after a start tag is tokenized.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Raw {
    /// Until `</name`, character references kept as written.
    Text(&'static str),
    /// Until `</name`, character references parsed.
    Rcdata(&'static str),
    /// To the end of the page.
    Plaintext,
}

/// The tokenizer.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    raw: Option<Raw>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Lower case, borrowing when it already is.
fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            raw: None,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    /// The next token. `foreign`: the current element is SVG or MathML
    /// (raw text elements are not raw there, CDATA sections are text).
    pub(crate) fn next(&mut self, foreign: bool) -> Option<Token<'a>> {
        loop {
            if let Some(raw) = self.raw.take() {
                let rest = &self.src[self.pos..];
                let (end, decode) = match raw {
                    Raw::Plaintext => (rest.len(), false),
                    Raw::Text(name) => (end_tag_at(rest, name), false),
                    Raw::Rcdata(name) => (end_tag_at(rest, name), true),
                };
                self.pos += end;
                if end > 0 {
                    return Some(Token::Text {
                        text: &rest[..end],
                        decode,
                    });
                }
            }
            let bytes = self.bytes();
            if self.pos >= bytes.len() {
                return None;
            }
            if bytes[self.pos] != b'<' {
                let rest = &self.src[self.pos..];
                let end = memchr(b'<', rest.as_bytes()).unwrap_or(rest.len());
                self.pos += end;
                return Some(Token::Text {
                    text: &rest[..end],
                    decode: true,
                });
            }
            let next = bytes.get(self.pos + 1).copied();
            match next {
                Some(b) if b.is_ascii_alphabetic() => match self.start_tag(foreign) {
                    Some(tag) => return Some(Token::Start(tag)),
                    None => return None,
                },
                Some(b'/') => match bytes.get(self.pos + 2).copied() {
                    Some(b) if b.is_ascii_alphabetic() => return self.end_tag().map(Token::End),
                    Some(b'>') => self.pos += 3,
                    None => {
                        let text = &self.src[self.pos..];
                        self.pos = bytes.len();
                        return Some(Token::Text { text, decode: true });
                    }
                    Some(_) => self.skip_past(b'>'),
                },
                Some(b'!') => {
                    if let Some(token) = self.markup_declaration(foreign) {
                        return Some(token);
                    }
                }
                Some(b'?') => self.skip_past(b'>'),
                _ => {
                    self.pos += 1;
                    return Some(Token::Text {
                        text: "<",
                        decode: false,
                    });
                }
            }
        }
    }

    /// Moves past the next `byte` (or to the end).
    fn skip_past(&mut self, byte: u8) {
        let rest = &self.bytes()[self.pos..];
        self.pos += memchr(byte, rest).map_or(rest.len(), |i| i + 1);
    }

    /// A tag name at `pos`, lower case; moves past it.
    fn name(&mut self) -> Cow<'a, str> {
        let bytes = self.bytes();
        let start = self.pos;
        while self.pos < bytes.len()
            && !is_space(bytes[self.pos])
            && !matches!(bytes[self.pos], b'/' | b'>')
        {
            self.pos += 1;
        }
        lower(&self.src[start..self.pos])
    }

    /// `<name attrs...>`; `None` at the end of the page inside the tag.
    fn start_tag(&mut self, foreign: bool) -> Option<Tag<'a>> {
        self.pos += 1;
        let mut tag = Tag {
            name: self.name(),
            ..Tag::default()
        };
        tag.self_closing = self.attributes(|name, v| match name {
            "id" if tag.id.is_none() => tag.id = Some(value(v)),
            "class" if tag.class.is_none() => tag.class = Some(value(v)),
            "style" if tag.style.is_none() => tag.style = Some(value(v)),
            "hidden" => tag.hidden = true,
            _ => {}
        })?;
        if !foreign {
            self.raw = match &*tag.name {
                "script" => Some(Raw::Text("script")),
                "style" => Some(Raw::Text("style")),
                "xmp" => Some(Raw::Text("xmp")),
                "iframe" => Some(Raw::Text("iframe")),
                "noembed" => Some(Raw::Text("noembed")),
                "noframes" => Some(Raw::Text("noframes")),
                "noscript" => Some(Raw::Text("noscript")),
                "title" => Some(Raw::Rcdata("title")),
                "textarea" => Some(Raw::Rcdata("textarea")),
                "plaintext" => Some(Raw::Plaintext),
                _ => None,
            };
        }
        Some(tag)
    }

    /// `</name ...>`; `None` at the end of the page inside the tag.
    fn end_tag(&mut self) -> Option<Cow<'a, str>> {
        self.pos += 2;
        let name = self.name();
        self.attributes(|_, _| {})?;
        Some(name)
    }

    /// The attributes up to and past `>`: each name (lower case) and raw
    /// value to `each`. Returns whether the tag ends with `/>`, `None` at
    /// the end of the page.
    fn attributes(&mut self, mut each: impl FnMut(&str, &'a str)) -> Option<bool> {
        let bytes = self.bytes();
        loop {
            while self.pos < bytes.len() && is_space(bytes[self.pos]) {
                self.pos += 1;
            }
            match bytes.get(self.pos)? {
                b'>' => {
                    self.pos += 1;
                    return Some(false);
                }
                b'/' => {
                    self.pos += 1;
                    if bytes.get(self.pos) == Some(&b'>') {
                        self.pos += 1;
                        return Some(true);
                    }
                    continue;
                }
                _ => {}
            }
            // The name (a leading `=` belongs to it).
            let start = self.pos;
            self.pos += 1;
            while self.pos < bytes.len()
                && !is_space(bytes[self.pos])
                && !matches!(bytes[self.pos], b'/' | b'>' | b'=')
            {
                self.pos += 1;
            }
            let name = lower(&self.src[start..self.pos]);
            while self.pos < bytes.len() && is_space(bytes[self.pos]) {
                self.pos += 1;
            }
            let mut v = "";
            if bytes.get(self.pos) == Some(&b'=') {
                self.pos += 1;
                while self.pos < bytes.len() && is_space(bytes[self.pos]) {
                    self.pos += 1;
                }
                match bytes.get(self.pos)? {
                    &q @ (b'"' | b'\'') => {
                        let from = self.pos + 1;
                        let len = memchr(q, &bytes[from..])?;
                        v = &self.src[from..from + len];
                        self.pos = from + len + 1;
                    }
                    _ => {
                        let from = self.pos;
                        while self.pos < bytes.len()
                            && !is_space(bytes[self.pos])
                            && bytes[self.pos] != b'>'
                        {
                            self.pos += 1;
                        }
                        v = &self.src[from..self.pos];
                    }
                }
            }
            each(&name, v);
        }
    }

    /// `<!...`: a comment, doctype or CDATA section (text in foreign
    /// content), else a bogus comment. `None` when nothing is emitted.
    fn markup_declaration(&mut self, foreign: bool) -> Option<Token<'a>> {
        let rest = &self.src[self.pos..];
        if let Some(body) = rest.strip_prefix("<!--") {
            // `<!-->` and `<!--->` end at once.
            let end = if body.starts_with('>') {
                1
            } else if body.starts_with("->") {
                2
            } else {
                comment_end(body)
            };
            self.pos += 4 + end;
            return None;
        }
        if rest.len() >= 9 && rest.as_bytes()[2..9].eq_ignore_ascii_case(b"doctype") {
            let end = memchr(b'>', rest.as_bytes()).unwrap_or(rest.len());
            self.pos += (end + 1).min(rest.len());
            return Some(doctype(&rest[9..end]));
        }
        if foreign && let Some(body) = rest.strip_prefix("<![CDATA[") {
            let end = body.find("]]>").unwrap_or(body.len());
            self.pos += 9 + (end + 3).min(body.len());
            return Some(Token::Text {
                text: &body[..end],
                decode: false,
            });
        }
        self.skip_past(b'>');
        None
    }
}

/// Where a comment's body ends (past `-->` or `--!>`), or its length.
fn comment_end(body: &str) -> usize {
    let mut from = 0;
    while let Some(i) = body[from..].find("--") {
        let at = from + i + 2;
        if body[at..].starts_with('>') {
            return at + 1;
        }
        if body[at..].starts_with("!>") {
            return at + 2;
        }
        from = from + i + 1;
    }
    body.len()
}

/// Name and public id of a doctype's inside (after `<!doctype`).
fn doctype(inside: &str) -> Token<'_> {
    let mut words = inside.split_ascii_whitespace();
    let name = words.next();
    let lower = inside.to_ascii_lowercase();
    let quoted = |from: usize| -> Option<(usize, &str)> {
        let rest = &inside[from..];
        let open = rest.find(['"', '\''])?;
        let q = rest.as_bytes()[open];
        let close = memchr(q, &rest.as_bytes()[open + 1..])?;
        Some((
            from + open + 1 + close + 1,
            &rest[open + 1..open + 1 + close],
        ))
    };
    let (public_id, system_id) = if let Some(p) = lower.find("public") {
        match quoted(p + 6) {
            Some((after, id)) => (Some(id), quoted(after).is_some()),
            None => (None, false),
        }
    } else {
        (None, lower.contains("system"))
    };
    Token::Doctype {
        name,
        public_id,
        system_id,
    }
}

/// Where `</name` (any case) followed by a space, `/` or `>` starts in
/// `text`, or its length.
fn end_tag_at(text: &str, name: &str) -> usize {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr(b'<', &bytes[from..]) {
        let at = from + i;
        let after = at + 2 + name.len();
        if bytes.get(at + 1) == Some(&b'/')
            && bytes.len() >= after
            && bytes[at + 2..after].eq_ignore_ascii_case(name.as_bytes())
            && bytes
                .get(after)
                .is_none_or(|&b| is_space(b) || b == b'/' || b == b'>')
        {
            return at;
        }
        from = at + 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(html: &str) -> Vec<Token<'_>> {
        let mut lexer = Lexer::new(html);
        let mut out = Vec::new();
        while let Some(t) = lexer.next(false) {
            out.push(t);
        }
        out
    }

    fn text(t: &str) -> Token<'_> {
        Token::Text {
            text: t,
            decode: true,
        }
    }

    #[test]
    fn tags_attributes_and_text() {
        let toks = tokens(
            "<DIV Class='a b' id=main data-x=\"1>2\" hidden>Hi &amp; <b>there</b></div><br/>",
        );
        assert_eq!(
            toks[0],
            Token::Start(Tag {
                name: "div".into(),
                id: Some("main".into()),
                class: Some("a b".into()),
                hidden: true,
                ..Tag::default()
            })
        );
        assert_eq!(toks[1], text("Hi &amp; "));
        assert_eq!(toks[3], text("there"));
        assert_eq!(toks[4], Token::End("b".into()));
        assert_eq!(toks[5], Token::End("div".into()));
        assert!(matches!(&toks[6], Token::Start(t) if t.name == "br" && t.self_closing));
        assert_eq!(toks.len(), 7);
    }

    #[test]
    fn comments_doctypes_and_bogus_markup() {
        let toks = tokens(
            "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\"><!-- a <p> -- b -->x<!-->y<!--->z<?php no ?>1 < 2</ x>3</>4<!x>",
        );
        assert_eq!(
            toks[0],
            Token::Doctype {
                name: Some("html"),
                public_id: Some("-//W3C//DTD HTML 4.01 Transitional//EN"),
                system_id: false
            }
        );
        let texts: String = toks[1..]
            .iter()
            .map(|t| match t {
                Token::Text { text, .. } => *text,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, "xyz1 < 234");
    }

    #[test]
    fn raw_text_elements() {
        let toks = tokens(
            "<script>if (a < b && c) document.write('</div>')</script ><title>A &amp; B</title><style>p{}</STYLE>",
        );
        assert_eq!(
            toks[1],
            Token::Text {
                text: "if (a < b && c) document.write('</div>')",
                decode: false
            }
        );
        assert_eq!(toks[2], Token::End("script".into()));
        assert_eq!(toks[4], text("A &amp; B"));
        assert_eq!(
            toks[7],
            Token::Text {
                text: "p{}",
                decode: false
            }
        );
        assert_eq!(toks[8], Token::End("style".into()));
    }

    #[test]
    fn a_tag_cut_off_by_the_end_is_dropped() {
        assert_eq!(tokens("a<div class=\"x"), [text("a")]);
        assert_eq!(tokens("a<div"), [text("a")]);
        assert_eq!(tokens("a</"), [text("a"), text("</")]);
    }
}
