use super::golden::{ERRORS, NODESETS, RANGESETS};
use super::*;

#[test]
fn nodesets_fold_count_and_expand_like_clustershell() {
    for &(input, folded, folded_autostep, len, names) in NODESETS {
        let set = NodeSet::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(set.to_string(), folded, "fold of {input:?}");
        assert_eq!(set.folded(Some(3)), folded_autostep, "autostep fold of {input:?}");
        assert_eq!(set.len(), len, "length of {input:?}");
        assert_eq!(set.iter().collect::<Vec<_>>(), names, "expansion of {input:?}");
        // Folding is lossless: the folded string and the expanded names give back the same set.
        assert_eq!(NodeSet::parse(folded).unwrap(), set, "reparse of {folded:?}");
        assert_eq!(NodeSet::from_names(names), set, "names of {input:?}");
    }
}

#[test]
fn rangesets_fold_like_clustershell() {
    for &(input, folded, folded_autostep, len) in RANGESETS {
        let set = RangeSet::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(set.to_string(), folded, "fold of {input:?}");
        assert_eq!(set.folded(Some(3)), folded_autostep, "autostep fold of {input:?}");
        assert_eq!(set.len(), len, "length of {input:?}");
        assert_eq!(RangeSet::parse(folded_autostep).unwrap(), set, "reparse of {folded_autostep:?}");
    }
}

#[test]
fn rejects_what_clustershell_rejects_with_the_same_reason() {
    for &(input, clustershell_message) in ERRORS {
        let err = NodeSet::parse(input).expect_err(input);
        assert!(
            clustershell_message.contains(&err.message),
            "{input:?}: we say {err}, ClusterShell says {clustershell_message}"
        );
    }
}

#[test]
fn rejects_what_we_do_not_support_with_a_reason() {
    for (input, reason) in [("@compute", "node groups"), ("node*", "wildcards"), ("n[-5-3]", "negative")] {
        let err = NodeSet::parse(input).expect_err(input);
        assert!(err.to_string().contains(reason), "{input:?}: {err}");
    }
}

#[test]
fn member_indices_are_unpadded_and_fold_strides() {
    let members = RangeSet::from_values((0..=30).step_by(3));
    assert_eq!(members.folded(Some(3)), "0-30/3");
    assert_eq!(members.to_string(), "0,3,6,9,12,15,18,21,24,27,30");
    let span = RangeSet::from_span(5, 120);
    assert_eq!(span.to_string(), "5-120");
    assert_eq!(span.len(), 116);
    assert!(span.contains_value(99) && span.contains_value(100) && !span.contains_value(121));
    assert_eq!(span.values().collect::<Vec<_>>(), (5..=120).collect::<Vec<_>>());
}

#[test]
fn set_operations_on_hosts() {
    let a: NodeSet = "node[1-5],login1".parse().unwrap();
    let b: NodeSet = "node[4-8],login[1-2]".parse().unwrap();
    assert_eq!(a.union(&b).to_string(), "login[1-2],node[1-8]");
    assert_eq!(a.intersection(&b).to_string(), "login1,node[4-5]");
    assert_eq!(a.difference(&b).to_string(), "node[1-3]");
    assert_eq!(a.symmetric_difference(&b).to_string(), "login2,node[1-3,6-8]");
    assert!(a.intersection(&b).is_subset(&a));
    assert!(a.contains("login1") && !a.contains("login2") && !a.contains("node[1-2]"));
    let grid: NodeSet = "rack[1-2]n[1-3]".parse().unwrap();
    assert_eq!(grid.difference(&"rack1n2".parse().unwrap()).len(), 5);
}

#[test]
fn serialises_as_the_folded_string() {
    let set: NodeSet = "node[01-03,05]".parse().unwrap();
    let json = serde_json::to_string(&set).unwrap();
    assert_eq!(json, "\"node[01-03,05]\"");
    assert_eq!(serde_json::from_str::<NodeSet>(&json).unwrap(), set);
}

#[test]
fn indices_of_any_length_fold_like_clustershell() {
    // `nodeset -f` of ClusterShell 1.10.1 on the same inputs.
    for (input, folded) in [
        (
            "node18446744073709551616,node18446744073709551617,node18446744073709551615",
            "node[18446744073709551615-18446744073709551617]",
        ),
        (
            "node99999999999999999999,node100000000000000000000",
            "node[99999999999999999999-100000000000000000000]",
        ),
        ("n[9999999999999999998-10000000000000000001]", "n[9999999999999999998-10000000000000000001]"),
        (
            "n[018446744073709551615-018446744073709551618],n1",
            "n[1,018446744073709551615-018446744073709551618]",
        ),
        (
            "a1b18446744073709551617,a1b18446744073709551618,a2b18446744073709551617,a2b18446744073709551618",
            "a[1-2]b[18446744073709551617-18446744073709551618]",
        ),
    ] {
        let set = NodeSet::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(set.to_string(), folded, "fold of {input:?}");
        assert_eq!(NodeSet::from_names(set.iter()), set, "names of {input:?}");
        assert_eq!(NodeSet::parse(folded).unwrap(), set, "reparse of {folded:?}");
    }
    let stepped = RangeSet::parse("100000000000000000000-100000000000000000012/3").unwrap();
    assert_eq!(stepped.folded(Some(3)), "100000000000000000000-100000000000000000012/3");
    assert_eq!(stepped.len(), 5);
    assert!(stepped.contains(&Index::from_digits("100000000000000000003")));
    assert!(!stepped.contains(&Index::from_digits("100000000000000000004")));
    let err = NodeSet::parse("n[1-99999999999999999999999]").unwrap_err();
    assert_eq!(err.message, "range too large");
}
