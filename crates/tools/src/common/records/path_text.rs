use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A path in JSON: the text itself when it is valid UTF-8, otherwise lossy text (U+FFFD for the
/// invalid bytes) plus the exact bytes in base64.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncodedPath {
    pub path: String,
    pub path_base64: Option<String>,
}

impl EncodedPath {
    pub fn new(bytes: &[u8]) -> Self {
        let (text, raw) = split(bytes);
        EncodedPath { path: text.into_owned(), path_base64: raw.map(|raw| STANDARD.encode(raw)) }
    }

    /// The exact path bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        match &self.path_base64 {
            Some(encoded) => STANDARD.decode(encoded),
            None => Ok(self.path.as_bytes().to_vec()),
        }
    }
}

/// The path as text, and the raw bytes when the text is not exact.
pub(super) fn split(bytes: &[u8]) -> (Cow<'_, str>, Option<&[u8]>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (Cow::Borrowed(text), None),
        Err(_) => (String::from_utf8_lossy(bytes), Some(bytes)),
    }
}

/// Base64 of `bytes`, for the JSON Lines writer.
pub(super) fn base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_paths_stay_text_and_others_round_trip_through_base64() {
        let plain = EncodedPath::new("dir/naïve\nname".as_bytes());
        assert_eq!(plain.path, "dir/naïve\nname");
        assert_eq!(plain.path_base64, None);

        let raw = b"dir/\xff\xfe-bad".as_slice();
        let odd = EncodedPath::new(raw);
        assert_eq!(odd.path, "dir/\u{fffd}\u{fffd}-bad");
        assert_eq!(odd.to_bytes().unwrap(), raw);
        assert_eq!(plain.to_bytes().unwrap(), "dir/naïve\nname".as_bytes());
    }
}
