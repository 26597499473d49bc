//! What to capture (`Target`: a local file or a URL) and the page source as
//! served: read from disk for files, decoded the way the browser decoded it.

use std::path::{Path, PathBuf};

use encoding_rs::Encoding;
use url::Url;

use super::CaptureError;

/// A page to capture: a local file or an http(s)/file URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file on this machine.
    File(PathBuf),
    /// A URL the browser navigates to.
    Url(Url),
}

impl Target {
    /// Reads a command-line argument: `http://`, `https://` and `file://`
    /// arguments are URLs, anything else is a path.
    pub fn parse(arg: &str) -> Target {
        match Url::parse(arg) {
            Ok(url) if url.scheme() == "file" => match url.to_file_path() {
                Ok(path) => Target::File(path),
                Err(()) => Target::Url(url),
            },
            Ok(url) if matches!(url.scheme(), "http" | "https") => Target::Url(url),
            _ => Target::File(PathBuf::from(arg)),
        }
    }

    /// How the target is named in messages.
    pub fn display(&self) -> String {
        match self {
            Target::File(path) => path.display().to_string(),
            Target::Url(url) => url.to_string(),
        }
    }
}

/// A target made ready for the browser: the URL to open and, for files, the
/// bytes already read (so the stored source is exactly the file).
#[derive(Debug)]
pub(crate) struct Source {
    pub url: Url,
    pub file_bytes: Option<Vec<u8>>,
}

/// Reads a file target (size-checked and sniffed) or passes a URL through.
pub(crate) async fn load(target: &Target, max_bytes: u64) -> Result<Source, CaptureError> {
    let path = match target {
        Target::Url(url) => {
            return Ok(Source {
                url: url.clone(),
                file_bytes: None,
            });
        }
        Target::File(path) => path,
    };
    let read_err = |source| CaptureError::Read {
        path: path.clone(),
        source,
    };
    let abs = tokio::fs::canonicalize(path).await.map_err(read_err)?;
    let meta = tokio::fs::metadata(&abs).await.map_err(read_err)?;
    if meta.is_dir() {
        return Err(CaptureError::NotHtml {
            target: path.display().to_string(),
            reason: "it is a directory".into(),
        });
    }
    if meta.len() > max_bytes {
        return Err(CaptureError::TooLarge {
            target: path.display().to_string(),
            bytes: meta.len(),
            limit: max_bytes,
        });
    }
    let bytes = tokio::fs::read(&abs).await.map_err(read_err)?;
    check_bytes(path, &bytes)?;
    let url = Url::from_file_path(&abs).map_err(|()| CaptureError::NotHtml {
        target: path.display().to_string(),
        reason: "path cannot be written as a file: URL".into(),
    })?;
    Ok(Source {
        url,
        file_bytes: Some(bytes),
    })
}

/// Refuses files that cannot be an HTML page: empty, or binary (NUL bytes in
/// the first 8 KiB of a file without a UTF-16 byte-order mark).
fn check_bytes(path: &Path, bytes: &[u8]) -> Result<(), CaptureError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(CaptureError::Empty {
            path: path.to_path_buf(),
        });
    }
    let utf16 = bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]);
    let head = &bytes[..bytes.len().min(8192)];
    if !utf16 && head.contains(&0) {
        return Err(CaptureError::NotHtml {
            target: path.display().to_string(),
            reason: "binary data (NUL bytes)".into(),
        });
    }
    Ok(())
}

/// Decodes a page source to text: a byte-order mark wins, then the encoding
/// the browser used (`document.characterSet`), then a `<meta charset>` in the
/// first KiB, then UTF-8 when valid, else Windows-1252 (what browsers assume
/// for unlabelled Western pages). NUL characters become U+FFFD, as an HTML
/// parser would make them, so the text can be stored in any database.
pub fn decode_html(bytes: &[u8], browser_label: Option<&str>) -> String {
    let encoding = Encoding::for_bom(bytes)
        .map(|(enc, _)| enc)
        .or_else(|| browser_label.and_then(|l| Encoding::for_label(l.as_bytes())))
        .or_else(|| meta_charset(bytes))
        .unwrap_or_else(|| {
            if std::str::from_utf8(bytes).is_ok() {
                encoding_rs::UTF_8
            } else {
                encoding_rs::WINDOWS_1252
            }
        });
    // `decode` sniffs the BOM itself and strips it.
    let (text, _, _) = encoding.decode(bytes);
    if text.contains('\0') {
        text.replace('\0', "\u{FFFD}")
    } else {
        text.into_owned()
    }
}

/// The charset named by a `<meta charset=...>` or `<meta http-equiv
/// content="...; charset=...">` in the first 1024 bytes (the HTML prescan
/// window). A rough scan: the browser's own decision, when we have it, wins.
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(|b| b.to_ascii_lowercase()).collect();
    let needle = b"charset=";
    let at = lower.windows(needle.len()).position(|w| w == needle)?;
    let rest = &lower[at + needle.len()..];
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.')))
        .unwrap_or(rest.len());
    let enc = Encoding::for_label(&rest[..end])?;
    // A page cannot be labelled UTF-16 from inside itself (HTML spec).
    if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
        Some(encoding_rs::UTF_8)
    } else {
        Some(enc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        assert!(matches!(Target::parse("https://a.com/x"), Target::Url(_)));
        assert!(matches!(Target::parse("page.html"), Target::File(_)));
        assert_eq!(
            Target::parse("file:///tmp/a.html"),
            Target::File(PathBuf::from("/tmp/a.html"))
        );
        // A Windows-style or odd path is a path, not a URL.
        assert!(matches!(Target::parse("c:page.html"), Target::File(_)));
    }

    #[test]
    fn decodes_labelled_and_unlabelled_pages() {
        let latin1 = b"<p>caf\xe9 \x93quoted\x94</p>";
        assert_eq!(
            decode_html(latin1, None),
            "<p>café \u{201c}quoted\u{201d}</p>"
        );
        let meta = b"<meta charset=\"iso-8859-7\"><p>\xe1</p>";
        assert_eq!(
            decode_html(meta, None),
            "<meta charset=\"iso-8859-7\"><p>α</p>"
        );
        assert_eq!(
            decode_html(meta, Some("windows-1252")),
            "<meta charset=\"iso-8859-7\"><p>á</p>"
        );
        let bom = b"\xEF\xBB\xBF<p>\xc3\xa9</p>";
        assert_eq!(decode_html(bom, Some("windows-1252")), "<p>é</p>");
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("<p>é</p>".encode_utf16().flat_map(|u| u.to_le_bytes()))
            .collect();
        assert_eq!(decode_html(&utf16, None), "<p>é</p>");
        assert_eq!(decode_html(b"a\0b", None), "a\u{FFFD}b");
    }

    #[test]
    fn refuses_empty_and_binary_files() {
        let p = Path::new("x.html");
        assert!(matches!(
            check_bytes(p, b""),
            Err(CaptureError::Empty { .. })
        ));
        assert!(matches!(
            check_bytes(p, b"  \n"),
            Err(CaptureError::Empty { .. })
        ));
        assert!(matches!(
            check_bytes(p, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Err(CaptureError::NotHtml { .. })
        ));
        assert!(check_bytes(p, b"<p>ok</p>").is_ok());
    }
}
