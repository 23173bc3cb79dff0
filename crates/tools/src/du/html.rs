//! `--html FILE`: one self-contained page (no network fetches) with the tree as a zoomable,
//! squarified treemap — click a directory to zoom in, the path above to zoom out, hover for the
//! size, share and entry count. The tree is the `--json` document, embedded in the page.

use super::json::DuJson;

const TEMPLATE: &str = include_str!("report.html");
const DATA: &str = "__CANOPY_DU_DATA__";

pub fn page(doc: &DuJson) -> String {
    let json = serde_json::to_string(doc).expect("the tree serialises");
    // `<` only occurs inside JSON strings, where \u003c means the same: no name can close the
    // script element.
    TEMPLATE.replacen(DATA, &json.replace('<', "\\u003c"), 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::du::json::{JsonNode, Sizes};

    #[test]
    fn embeds_the_tree_and_nothing_from_the_network() {
        let sizes = Sizes { allocated_bytes: 4096, apparent_bytes: 3, entries: 1 };
        let doc = DuJson {
            format: "canopy.du".into(),
            version: 1,
            metric: "allocated_bytes".into(),
            depth: 3,
            min_ratio: 0.01,
            top: None,
            files: false,
            errors: 0,
            total: sizes,
            roots: vec![JsonNode {
                name: "</script><b>".into(),
                name_base64: None,
                kind: "dir".into(),
                sizes,
                children: vec![],
            }],
        };
        let page = page(&doc);
        assert!(!page.contains(DATA));
        assert!(!page.contains("</script><b>"), "a name cannot end the script");
        assert!(page.contains("\\u003c/script>\\u003cb>"));
        assert!(!page.contains("http://") && !page.contains("https://"), "self-contained");
        let start = page.find("application/json\">").unwrap() + "application/json\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let back: DuJson = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(back, doc);
    }
}
