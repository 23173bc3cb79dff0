use super::decimal::Decimal;
use super::*;
use canopy_nodeset::RangeSet;
use proptest::prelude::*;

fn dec(text: &str) -> Decimal {
    Decimal::parse(text).unwrap()
}

fn bytes(text: &str) -> Value {
    Value::Bytes(text.as_bytes().to_vec())
}

/// Aggregates `items` through the serialised interface in one go: one host holding every member.
fn flat(spec: &AggrSpec, items: &[(u64, Value)]) -> Vec<u8> {
    let aggregation = Registry::new().resolve(spec).unwrap();
    let refs: Vec<(u64, &Value)> = items.iter().map(|(m, v)| (*m, v)).collect();
    aggregation.leaves(&HostConfig::local(), &refs).unwrap()
}

/// Aggregates `items` the way a tree does: members split over hosts at the cut points, then consecutive
/// partials merged in groups whose sizes come from `choices`, level after level.
fn tree(spec: &AggrSpec, items: &[(u64, Value)], choices: &[usize]) -> Vec<u8> {
    let aggregation = Registry::new().resolve(spec).unwrap();
    let mut choices = choices.iter().cycle().copied();
    let mut partials = Vec::new();
    let mut rest = items;
    while !rest.is_empty() {
        let take = 1 + choices.next().unwrap() % rest.len();
        let refs: Vec<(u64, &Value)> = rest[..take].iter().map(|(m, v)| (*m, v)).collect();
        partials.push(aggregation.leaves(&HostConfig::local(), &refs).unwrap());
        rest = &rest[take..];
    }
    while partials.len() > 1 {
        let mut next = Vec::new();
        let mut level = partials.into_iter().peekable();
        while level.peek().is_some() {
            let fanout = 2 + choices.next().unwrap() % 7;
            let group: Vec<Vec<u8>> = level.by_ref().take(fanout).collect();
            next.push(aggregation.merge(group).unwrap());
        }
        partials = next;
    }
    partials.pop().unwrap()
}

fn value_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..50).prop_map(Value::Int),
        proptest::collection::vec(
            prop_oneof![Just("1"), Just("2.5"), Just("x"), Just("-3"), Just("0.125")],
            0..4
        )
        .prop_map(|tokens| bytes(&tokens.join(" "))),
    ]
}

fn members_strategy() -> impl Strategy<Value = Vec<(u64, Value)>> {
    proptest::collection::vec((1u64..4, value_strategy()), 1..40).prop_map(|steps| {
        let mut member = 0;
        steps
            .into_iter()
            .map(|(gap, value)| {
                member += gap;
                (member, value)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every built-in gives the same answer for any tree shape and any split of members over hosts.
    #[test]
    fn builtins_do_not_depend_on_the_tree_shape(items in members_strategy(),
                                                 choices in proptest::collection::vec(0usize..1000, 1..30)) {
        for builtin in Builtin::ALL {
            let spec = AggrSpec::Builtin(builtin);
            prop_assert_eq!(tree(&spec, &items, &choices), flat(&spec, &items), "{}", builtin.name());
        }
    }

    /// The merges themselves are associative on partials, not only through the tree helper.
    #[test]
    fn merge_is_associative(a in members_strategy(), b in members_strategy(), c in members_strategy()) {
        // Shift the member ranges so that a < b < c, as the tree guarantees.
        let shift = |items: Vec<(u64, Value)>, by: u64| items.into_iter().map(|(m, v)| (m + by, v)).collect::<Vec<_>>();
        let (b, c) = (shift(b, 1000), shift(c, 2000));
        for builtin in Builtin::ALL {
            let spec = AggrSpec::Builtin(builtin);
            let aggregation = Registry::new().resolve(&spec).unwrap();
            let (pa, pb, pc) = (flat(&spec, &a), flat(&spec, &b), flat(&spec, &c));
            let left = aggregation.merge(vec![aggregation.merge(vec![pa.clone(), pb.clone()]).unwrap(), pc.clone()]).unwrap();
            let right = aggregation.merge(vec![pa, aggregation.merge(vec![pb, pc]).unwrap()]).unwrap();
            prop_assert_eq!(left, right, "{}", builtin.name());
        }
    }
}

fn result(builtin: Builtin, items: &[(u64, Value)]) -> AggrResult {
    AggrResult::new(AggrSpec::Builtin(builtin), Some(flat(&AggrSpec::Builtin(builtin), items)))
}

#[test]
fn average_of_unequal_subtrees_is_not_a_mean_of_means() {
    // Subtree one: three members at 1.0; subtree two: one member at 4.0. The mean is 7/4, a mean of the
    // subtree means would be 2.5.
    let spec = AggrSpec::Builtin(Builtin::Average);
    let aggregation = Registry::new().resolve(&spec).unwrap();
    let ones = [(0, Value::Int(1)), (1, Value::Int(1)), (2, Value::Int(1))];
    let four = [(3, Value::Int(4))];
    let left = flat(&spec, &ones);
    let right = flat(&spec, &four);
    let merged = AggrResult::new(spec, Some(aggregation.merge(vec![left, right]).unwrap()));
    let averages = merged.decode::<Averages>().unwrap().unwrap();
    assert_eq!(averages.0, vec![Some(SumCount { sum: Decimal::from_int(7), count: 4 })]);
    assert_eq!(averages.means(), vec![Some(dec("1.75"))]);
}

#[test]
fn numeric_aggregations_work_column_by_column() {
    let loadavg = [
        (0, bytes("0.50 0.40 0.30 1/200 100")),
        (1, bytes("1.50 0.40 0.10 2/210 200")),
        (2, bytes("0.25 0.90 0.30 1/190 300")),
    ];
    let sums = result(Builtin::Sum, &loadavg).decode::<Sums>().unwrap().unwrap();
    assert_eq!(sums.0, vec![Some(dec("2.25")), Some(dec("1.7")), Some(dec("0.7")), None, Some(dec("600"))]);
    let means = result(Builtin::Average, &loadavg).decode::<Averages>().unwrap().unwrap().means();
    assert_eq!(
        means,
        vec![Some(dec("0.75")), Some(dec("0.566666667")), Some(dec("0.233333333")), None, Some(dec("200"))]
    );
    let max = result(Builtin::Max, &loadavg).decode::<Extremes>().unwrap().unwrap();
    let column =
        |e: &Extremes, i: usize| e.0[i].clone().map(|x| (x.value.to_string(), x.members.to_string()));
    assert_eq!(column(&max, 0), Some(("1.5".into(), "1".into())));
    assert_eq!(column(&max, 1), Some(("0.9".into(), "2".into())));
    // A tie keeps every member that hits the extreme.
    assert_eq!(column(&max, 2), Some(("0.3".into(), "0,2".into())));
    let min = result(Builtin::Min, &loadavg).decode::<Extremes>().unwrap().unwrap();
    assert_eq!(column(&min, 1), Some(("0.4".into(), "0-1".into())));
    assert_eq!(column(&min, 3), None);
}

#[test]
fn equal_and_zero_summaries() {
    let same = [(0, Value::Int(4096)), (5, Value::Int(4096))];
    let differ = [(0, Value::Int(4096)), (5, Value::Int(0))];
    assert_eq!(
        result(Builtin::Equal, &same).decode::<Agreement>().unwrap(),
        Some(Agreement::Same(Value::Int(4096)))
    );
    assert_eq!(result(Builtin::Equal, &differ).decode::<Agreement>().unwrap(), Some(Agreement::Differ));
    assert_eq!(result(Builtin::Zero, &differ).decode::<Succeeded>().unwrap(), Some(Succeeded(2)));
}

#[test]
fn concat_keeps_every_member_in_member_order() {
    let items: Vec<(u64, Value)> = (0..6).map(|m| (m * 2, bytes(&format!("member {m}")))).collect();
    let spec = AggrSpec::Builtin(Builtin::Concat);
    let aggregation = Registry::new().resolve(&spec).unwrap();
    // Partials given out of order (a commutative use) still come out sorted.
    let merged = aggregation.merge(vec![flat(&spec, &items[3..]), flat(&spec, &items[..3])]).unwrap();
    let concat = AggrResult::new(spec, Some(merged)).decode::<Concatenation>().unwrap().unwrap();
    assert_eq!(concat.0, items);
}

#[test]
fn equivalence_classes_are_exact() {
    let items = [
        (0, bytes("alpha")),
        (1, bytes("beta")),
        (2, bytes("alpha")),
        (3, bytes("alpha\n")),
        (4, bytes("beta")),
        (7, bytes("alpha")),
    ];
    let classes = result(Builtin::Classes, &items).decode::<Classes<Value>>().unwrap().unwrap();
    let listed: Vec<(Value, String)> =
        classes.by_first_member().into_iter().map(|(v, m)| (v.clone(), m.to_string())).collect();
    assert_eq!(
        listed,
        vec![(bytes("alpha"), "0,2,7".into()), (bytes("beta"), "1,4".into()), (bytes("alpha\n"), "3".into())]
    );
    // Checksums partition the members the same way.
    let digests = result(Builtin::Checksum, &items).decode::<Classes<Digest>>().unwrap().unwrap();
    let mut partition: Vec<RangeSet> = digests.0.iter().map(|(_, m)| m.clone()).collect();
    let mut expected: Vec<RangeSet> = classes.0.iter().map(|(_, m)| m.clone()).collect();
    partition.sort();
    expected.sort();
    assert_eq!(partition, expected);
    // `printf beta | sha256sum`
    let beta = "f44e64e75f3948e9f73f8dfa94721c4ce8cbb4f265c4790c702b2d41cfbf2753";
    let beta_members = digests.0.iter().find(|(d, _)| d.to_string() == beta).map(|(_, m)| m.to_string());
    assert_eq!(beta_members.as_deref(), Some("1,4"));
}

#[test]
fn registered_aggregations_get_their_parameters() {
    struct CountAbove(i64);
    impl Aggregation for CountAbove {
        type Partial = u64;
        fn leaf(&self, _member: u64, value: &Value) -> u64 {
            u64::from(matches!(value, Value::Int(v) if *v > self.0))
        }
        fn merge(&self, left: u64, right: u64) -> u64 {
            left + right
        }
    }
    let mut registry = Registry::new();
    registry
        .register("count-above", |params: &str| params.parse().map(CountAbove).map_err(|e| format!("{e}")));
    let spec = AggrSpec::Registered { name: "count-above".into(), params: "10".into() };
    let aggregation = registry.resolve(&spec).unwrap();
    let items = [(0, Value::Int(5)), (1, Value::Int(11)), (2, Value::Int(30))];
    let refs: Vec<(u64, &Value)> = items.iter().map(|(m, v)| (*m, v)).collect();
    let partial = aggregation.leaves(&HostConfig::local(), &refs).unwrap();
    assert_eq!(AggrResult::new(spec, Some(partial)).decode::<u64>().unwrap(), Some(2));

    let bad = AggrSpec::Registered { name: "count-above".into(), params: "ten".into() };
    assert!(registry.resolve(&bad).err().unwrap().to_string().contains("invalid digit"));
    let unknown = AggrSpec::Registered { name: "nope".into(), params: String::new() };
    assert!(registry.resolve(&unknown).err().unwrap().to_string().contains("no aggregation is registered"));
}
