use super::super::linkbench_data::{parse_count_key, parse_link_key, Verified, MIX};
use super::*;
use strata::internals::Rng;

#[test]
fn the_mix_is_linkbench_s_and_sums_to_100() {
    let total: f64 = MIX.iter().map(|m| m.1).sum();
    assert!((total - 100.0).abs() < 1e-6, "{total}");
    // Draws at the edges land in the first and the last operation.
    assert_eq!(choose_op(0.0), Op::AddLink);
    assert_eq!(choose_op(0.999_999_999), Op::GetNode);
    // Over many draws each operation gets its share.
    let mut rng = Rng::new(7);
    let draws = 200_000;
    let mut seen = std::collections::HashMap::new();
    for _ in 0..draws {
        *seen.entry(choose_op(uniform(&mut rng))).or_insert(0u64) += 1;
    }
    for (op, share) in MIX {
        let got = 100.0 * seen[&op] as f64 / draws as f64;
        assert!(
            (got - share).abs() < 0.3,
            "{}: {got} vs {share}",
            REQUEST_OPS[op as usize]
        );
    }
}

/// The sampler against the exact probabilities of Zipf's law, for exponents below, at
/// and above 1 (a chi-square test at a generous threshold, and rank 0's frequency).
#[test]
fn keys_sort_as_their_numbers_and_values_round_trip() {
    assert!(link_key(1, 2, 300) < link_key(1, 3, 0));
    assert!(link_key(1, u64::MAX, 0) < link_key(2, 0, 0));
    assert!(link_time_key(7, 1, 255, 9) < link_time_key(7, 1, 256, 0));
    assert_eq!(parse_link_key(&link_key(1, 2, 3)), Some((1, 2, 3)));
    assert_eq!(parse_count_key(&count_key(4, 5)), Some((4, 5)));
    assert_eq!(
        parse_link_time_key(&link_time_key(1, 2, 3, 4)),
        Some((1, 2, 3, 4))
    );
    assert_eq!(parse_link_key(b"short"), None);
    let node = Node {
        kind: NODE_TYPE,
        version: 2,
        time: 1_700_000_000,
        data: b"payload".to_vec(),
    };
    assert_eq!(Node::decode(&node.encode()), Some(node));
    let link = Link {
        visibility: VISIBILITY_VISIBLE,
        version: 0,
        time: 1_700_000_000_000,
        data: vec![],
    };
    assert_eq!(Link::decode(&link.encode()), Some(link));
    assert_eq!(Node::decode(&[0; 15]), None);
    assert_eq!(parse_count(&count_value(42)), Some(42));
    // A decrement is the wrapping add of u64::MAX, as uint64add adds.
    assert_eq!(41u64.wrapping_add(u64::MAX), 40);
}

#[test]
fn full_link_lists_are_remembered_for_history_queries() {
    let mut rng = Rng::new(1);
    let list = |links, oldest| LinkList {
        links,
        bytes: 0,
        oldest,
    };
    let mut history = Vec::new();
    // A short list is not remembered; a full one is, once.
    remember_tail(&mut history, &mut rng, (1, 7), &list(5, 100), None);
    assert!(history.is_empty());
    remember_tail(
        &mut history,
        &mut rng,
        (1, 7),
        &list(RANGE_LIMIT, 100),
        None,
    );
    remember_tail(&mut history, &mut rng, (1, 7), &list(RANGE_LIMIT, 90), None);
    assert_eq!(history, vec![(1, 7, 100)]);
    // A history query that fills the limit again reads on from its oldest link; a short
    // one ends the entry.
    remember_tail(
        &mut history,
        &mut rng,
        (1, 7),
        &list(RANGE_LIMIT, 40),
        Some(0),
    );
    assert_eq!(history, vec![(1, 7, 40)]);
    remember_tail(&mut history, &mut rng, (1, 7), &list(3, 10), Some(0));
    assert!(history.is_empty());
    // A full cache replaces an entry.
    for id1 in 0..HISTORY_LIMIT as u64 {
        remember_tail(
            &mut history,
            &mut rng,
            (id1, 7),
            &list(RANGE_LIMIT, 5),
            None,
        );
    }
    remember_tail(
        &mut history,
        &mut rng,
        (u64::MAX, 7),
        &list(RANGE_LIMIT, 5),
        None,
    );
    assert_eq!(history.len(), HISTORY_LIMIT);
    assert!(history.contains(&(u64::MAX, 7, 5)));
}

#[test]
fn the_verifier_finds_each_broken_invariant() {
    let visible = |time: u64| Link {
        visibility: VISIBILITY_VISIBLE,
        version: 0,
        time,
        data: b"d".to_vec(),
    };
    let hidden = Link {
        visibility: VISIBILITY_HIDDEN,
        ..visible(5)
    };
    let t = DEFAULT_LINK_TYPE;
    let good = |v: &mut Verifier| {
        v.link(&link_key(1, t, 1), &visible(10).encode());
        v.link(&link_key(1, t, 2), &visible(20).encode());
        v.link(&link_key(1, t, 3), &hidden.encode());
        v.count(&count_key(1, t), &count_value(2));
        v.index(&link_time_key(1, t, 10, 1), &visible(10).index_value());
        v.index(&link_time_key(1, t, 20, 2), &visible(20).index_value());
    };
    let mut v = Verifier::default();
    good(&mut v);
    assert_eq!(
        v.finish(),
        Ok(Verified {
            links: 3,
            visible_links: 2,
            counts: 1
        })
    );
    type Breakage = fn(&mut Verifier);
    let cases: [(Breakage, &str); 5] = [
        (
            |v| v.count(&count_key(1, DEFAULT_LINK_TYPE), &count_value(3)),
            "count of (1, 123456789) is 3",
        ),
        (
            |v| v.count(&count_key(9, DEFAULT_LINK_TYPE), &count_value(1)),
            "count of (9, 123456789) is 1, but it has 0",
        ),
        (
            |v| v.index(&link_time_key(1, DEFAULT_LINK_TYPE, 5, 3), b"\0\0\0\0d"),
            "has no visible link",
        ),
        (
            |v| {
                let link = Link {
                    visibility: VISIBILITY_VISIBLE,
                    version: 0,
                    time: 30,
                    data: vec![],
                };
                v.link(&link_key(2, DEFAULT_LINK_TYPE, 1), &link.encode());
            },
            "has no index entry",
        ),
        (|v| v.link(b"bad", b""), "does not parse"),
    ];
    for (breakage, message) in cases {
        let mut v = Verifier::default();
        good(&mut v);
        breakage(&mut v);
        let e = v.finish().unwrap_err();
        assert!(e.contains(message), "{e}");
    }
}
