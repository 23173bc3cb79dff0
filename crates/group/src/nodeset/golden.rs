//! Golden vectors computed with ClusterShell 1.10.1 (`NodeSet(s)`, `NodeSet(s, autostep=3)`, `len`, `list`;
//! `RangeSet(s)`, `RangeSet(s, autostep=3)`). Regenerate with the oracle test in `tests/nodeset_oracle.rs`.

/// (input, folded, folded with autostep 3, length, expanded names)
pub(super) const NODESETS: &[(&str, &str, &str, u64, &[&str])] = &[
    (
        "node[01-03,05]",
        "node[01-03,05]",
        "node[01-03,05]",
        4,
        &["node01", "node02", "node03", "node05"],
    ),
    (
        "node01,node02,node03,node05",
        "node[01-03,05]",
        "node[01-03,05]",
        4,
        &["node01", "node02", "node03", "node05"],
    ),
    (
        "n[1-2,01-02]",
        "n[1-2,01-02]",
        "n[1-2,01-02]",
        4,
        &["n1", "n2", "n01", "n02"],
    ),
    (
        "n[9,09,10,010]",
        "n[9,09-10,010]",
        "n[9,09-10,010]",
        4,
        &["n9", "n09", "n10", "n010"],
    ),
    (
        "n[8-12],n[08-12]",
        "n[8-9,08-12]",
        "n[8-9,08-12]",
        7,
        &["n8", "n9", "n08", "n09", "n10", "n11", "n12"],
    ),
    (
        "n[099-101],n[99-101]",
        "n[99,099-101]",
        "n[99,099-101]",
        4,
        &["n99", "n099", "n100", "n101"],
    ),
    ("node[0-00]", "node0", "node0", 1, &["node0"]),
    (
        "node[00-10]",
        "node[00-10]",
        "node[00-10]",
        11,
        &[
            "node00", "node01", "node02", "node03", "node04", "node05", "node06", "node07",
            "node08", "node09", "node10",
        ],
    ),
    (
        "node[1-3]-ib0",
        "node[1-3]-ib0",
        "node[1-3]-ib0",
        3,
        &["node1-ib0", "node2-ib0", "node3-ib0"],
    ),
    (
        "node[1-3]-ib[0-1]",
        "node[1-3]-ib[0-1]",
        "node[1-3]-ib[0-1]",
        6,
        &[
            "node1-ib0",
            "node1-ib1",
            "node2-ib0",
            "node2-ib1",
            "node3-ib0",
            "node3-ib1",
        ],
    ),
    (
        "rack[1-2]n[1-2]",
        "rack[1-2]n[1-2]",
        "rack[1-2]n[1-2]",
        4,
        &["rack1n1", "rack1n2", "rack2n1", "rack2n2"],
    ),
    (
        "a1b2,a1b3,a2b2,a2b3",
        "a[1-2]b[2-3]",
        "a[1-2]b[2-3]",
        4,
        &["a1b2", "a1b3", "a2b2", "a2b3"],
    ),
    (
        "rack[1-2]n[1-2],rack3n1",
        "rack[1-2]n[1-2],rack3n1",
        "rack[1-2]n[1-2],rack3n1",
        5,
        &["rack1n1", "rack1n2", "rack2n1", "rack2n2", "rack3n1"],
    ),
    (
        "n[1-3]b[1-3]!n2b2",
        "n[1,3]b[1-3],n2b[1,3]",
        "n[1,3]b[1-3],n2b[1,3]",
        8,
        &[
            "n1b1", "n1b2", "n1b3", "n3b1", "n3b2", "n3b3", "n2b1", "n2b3",
        ],
    ),
    (
        "rack[1-3]n[1-4]!rack2n[2-3]",
        "rack[1,3]n[1-4],rack2n[1,4]",
        "rack[1,3]n[1-4],rack2n[1,4]",
        10,
        &[
            "rack1n1", "rack1n2", "rack1n3", "rack1n4", "rack3n1", "rack3n2", "rack3n3", "rack3n4",
            "rack2n1", "rack2n4",
        ],
    ),
    (
        "c[1-2]r[1-2]n[1-2]!c1r1n1",
        "c2r[1-2]n[1-2],c1r2n[1-2],c1r1n2",
        "c2r[1-2]n[1-2],c1r2n[1-2],c1r1n2",
        7,
        &[
            "c2r1n1", "c2r1n2", "c2r2n1", "c2r2n2", "c1r2n1", "c1r2n2", "c1r1n2",
        ],
    ),
    ("x[1-2]y[1-2]&x[2-3]y[2-3]", "x2y2", "x2y2", 1, &["x2y2"]),
    (
        "x[1-3]y[1-3]^x[2-4]y[2-4]",
        "x[2-3]y[1,4],x1y[1-3],x4y[2-4]",
        "x[2-3]y[1,4],x1y[1-3],x4y[2-4]",
        10,
        &[
            "x2y1", "x2y4", "x3y1", "x3y4", "x1y1", "x1y2", "x1y3", "x4y2", "x4y3", "x4y4",
        ],
    ),
    (
        "node1[2-3]",
        "node[12-13]",
        "node[12-13]",
        2,
        &["node12", "node13"],
    ),
    (
        "node[1-2]0",
        "node[10,20]",
        "node[10,20]",
        2,
        &["node10", "node20"],
    ),
    (
        "node0[1-3]",
        "node[01-03]",
        "node[01-03]",
        3,
        &["node01", "node02", "node03"],
    ),
    (
        "node[1-3]0-ib",
        "node[10,20,30]-ib",
        "node[10-30/10]-ib",
        3,
        &["node10-ib", "node20-ib", "node30-ib"],
    ),
    (
        "x[0-30/3]",
        "x[0,3,6,9,12,15,18,21,24,27,30]",
        "x[0-30/3]",
        11,
        &[
            "x0", "x3", "x6", "x9", "x12", "x15", "x18", "x21", "x24", "x27", "x30",
        ],
    ),
    (
        "x[0-20/5],x[21-22]",
        "x[0,5,10,15,20-22]",
        "x[0-20/5,21-22]",
        7,
        &["x0", "x5", "x10", "x15", "x20", "x21", "x22"],
    ),
    (
        "node[1-3]!node2",
        "node[1,3]",
        "node[1,3]",
        2,
        &["node1", "node3"],
    ),
    (
        "node[1-5]&node[3-8]",
        "node[3-5]",
        "node[3-5]",
        3,
        &["node3", "node4", "node5"],
    ),
    (
        "node[1-5]^node[3-8]",
        "node[1-2,6-8]",
        "node[1-2,6-8]",
        5,
        &["node1", "node2", "node6", "node7", "node8"],
    ),
    (" a , b ", "a,b", "a,b", 2, &["a", "b"]),
    ("foo", "foo", "foo", 1, &["foo"]),
    (
        "foo,bar[1-2]",
        "bar[1-2],foo",
        "bar[1-2],foo",
        3,
        &["bar1", "bar2", "foo"],
    ),
    ("a%b[1-2]", "a%b[1-2]", "a%b[1-2]", 2, &["a%b1", "a%b2"]),
    (
        "node[1-3],node[2-5],other",
        "node[1-5],other",
        "node[1-5],other",
        6,
        &["node1", "node2", "node3", "node4", "node5", "other"],
    ),
    (
        "node[10-12],node[1-9]",
        "node[1-12]",
        "node[1-12]",
        12,
        &[
            "node1", "node2", "node3", "node4", "node5", "node6", "node7", "node8", "node9",
            "node10", "node11", "node12",
        ],
    ),
    ("node[1-3]!node[1-3]", "", "", 0, &[]),
    ("a,b!a", "b", "b", 1, &["b"]),
    (
        "host-[1-4].example.com",
        "host-[1-4].example.com",
        "host-[1-4].example.com",
        4,
        &[
            "host-1.example.com",
            "host-2.example.com",
            "host-3.example.com",
            "host-4.example.com",
        ],
    ),
    (
        "node-[1,3,5,7,9-11]",
        "node-[1,3,5,7,9-11]",
        "node-[1-9/2,10-11]",
        7,
        &[
            "node-1", "node-3", "node-5", "node-7", "node-9", "node-10", "node-11",
        ],
    ),
    ("", "", "", 0, &[]),
    ("node[7-7]", "node7", "node7", 1, &["node7"]),
    (
        "n[1-100]!n[2-99]",
        "n[1,100]",
        "n[1,100]",
        2,
        &["n1", "n100"],
    ),
    (
        "eth0-n[1-2],eth1-n[1-2]",
        "eth[0-1]-n[1-2]",
        "eth[0-1]-n[1-2]",
        4,
        &["eth0-n1", "eth0-n2", "eth1-n1", "eth1-n2"],
    ),
    (
        "n1-eth[0-1],n2-eth[0-1],n3-eth0",
        "n[1-2]-eth[0-1],n3-eth0",
        "n[1-2]-eth[0-1],n3-eth0",
        5,
        &["n1-eth0", "n1-eth1", "n2-eth0", "n2-eth1", "n3-eth0"],
    ),
];

/// (input, folded, folded with autostep 3, length)
pub(super) const RANGESETS: &[(&str, &str, &str, u64)] = &[
    ("0-30/3", "0,3,6,9,12,15,18,21,24,27,30", "0-30/3", 11),
    ("0,3,6,7,8,10,12", "0,3,6-8,10,12", "0-6/3,7-8,10,12", 7),
    ("1-5,7", "1-5,7", "1-5,7", 6),
    ("01-10", "01-10", "01-10", 10),
    ("1-2,01-02", "1-2,01-02", "1-2,01-02", 4),
    ("0-8/2,9,11,13", "0,2,4,6,8-9,11,13", "0-8/2,9,11,13", 8),
    ("5", "5", "5", 1),
    ("10-20/10", "10,20", "10,20", 2),
    ("1,2,4,8,16", "1-2,4,8,16", "1-2,4,8,16", 5),
    (
        "0-100/10,101-103",
        "0,10,20,30,40,50,60,70,80,90,100-103",
        "0-100/10,101-103",
        14,
    ),
    (
        "003,005,007,009,010",
        "003,005,007,009-010",
        "003-009/2,010",
        5,
    ),
];

/// Inputs ClusterShell rejects, with the message it gives.
pub(super) const ERRORS: &[(&str, &str)] = &[
    (
        "node[1-3",
        "NodeSetParseError: missing bracket: \"node[1-3\"",
    ),
    (
        "node1-3]",
        "NodeSetParseError: illegal closing bracket: \"node1-3]\"",
    ),
    (
        "node[3-1]",
        "NodeSetParseRangeError: bad range: \"invalid values in range : \"3-1\"\"",
    ),
    (
        "node[1-2][3]",
        "NodeSetParseError: illegal reopening bracket: \"[3]\"",
    ),
    (
        "n[a-b]",
        "NodeSetParseRangeError: bad range: \"cannot convert string to integer : \"a-b\"\"",
    ),
    (
        "n[01-100]",
        "NodeSetParseRangeError: bad range: \"padding length mismatch : \"01-100\"\"",
    ),
    (
        "n[1-2/0]",
        "NodeSetParseRangeError: bad range: \"invalid values in range : \"1-2/0\"\"",
    ),
    (
        "n[5/2]",
        "NodeSetParseRangeError: bad range: \"invalid step usage : \"5/2\"\"",
    ),
    (
        "node[1-3],",
        "NodeSetParseError: missing nodeset operand with ',' operator",
    ),
    (
        ",node",
        "NodeSetParseError: missing nodeset operand with ',' operator: \"node\"",
    ),
    (
        "node[1-2]]",
        "NodeSetParseError: illegal closing bracket: \"]\"",
    ),
    ("n[,]", "NodeSetParseRangeError: bad range: \"empty range\""),
    (
        "n[1-3/2]0",
        "NodeSetParseError: illegal trailing digits after range with steps: \"0\"",
    ),
    ("n[]", "NodeSetParseRangeError: bad range: \"empty range\""),
];
