use super::*;
use serde_json::json;

#[test]
fn header_is_the_union_of_flattened_keys_in_first_seen_order() {
    let page = json!({"TotalResults": 2, "Items": [
        {"Id": "a", "Detail": {"de": {"Title": "Hütte, \"alt\""}}, "Tags": ["x", "y"], "N": null},
        {"Id": "b", "Active": true, "Detail": {"it": {"Title": "line\nbreak"}}, "G": [{"L": 1}], "E": {}}
    ]});
    assert_eq!(
        render(&page),
        "Id,Detail.de.Title,Tags,N,Active,Detail.it.Title,G,E\r\n\
         a,\"Hütte, \"\"alt\"\"\",x|y,,,,,\r\n\
         b,,,,true,\"line\nbreak\",\"{\"\"L\"\":1}\",\r\n"
    );
}

#[test]
fn rows_written_one_at_a_time_match_rendering_the_page() {
    let docs = [
        json!({"Id": "a", "Detail": {"de": {"Title": "Hütte, \"alt\""}}, "Tags": ["x", "y"], "N": null}),
        json!({"Id": "b", "Active": true, "Detail": {"it": {"Title": "line\nbreak"}}, "G": [{"L": 1}], "E": {}}),
        json!({"Id": "c"}),
        json!({"Z": 1.5, "Id": "d", "a": {"b": [1, [2]]}}),
        json!({}),
        // Arrays of objects (their elements are compact JSON in the cell), languages,
        // numbers of every kind, strings needing CSV quoting and JSON escapes.
        json!({
            "Id": "e",
            "ImageGallery": [
                {"ImageUrl": "https://x/y?a=1,2", "Width": 640, "Height": -480,
                 "ImageTitle": {"de": "Hütte \"alt\"\n", "it": null, "en": "日本 😀"},
                 "Score": 1.5e-7, "Big": 12345678901234567890u64, "Huge": 1e300,
                 "Ctl": "tab\tnul\u{0}del\u{7f}", "Flags": [true, false, null]},
                [{"k": [1, {"z": "w"}]}, []], {}, null
            ],
            "Detail": {"de": {"Title": "Ä, ö"}, "en": {"Title": "line\r\nbreak"}},
            "Nums": [1, -2, 0.5, -0.0, 1e300, 2.5e-300, 18446744073709551615u64],
            "Mixed": [null, true, "s|t", "q\"", [1, {"k": "v"}]]
        }),
    ];
    let mut writer = RowWriter::default();
    let mut lines = Vec::new();
    for doc in &docs {
        let mut line = String::new();
        let had = writer.write_row(&doc.to_string(), &mut line).unwrap();
        lines.push((had, line));
    }
    let mut out = writer.header().into_bytes();
    for (had, line) in lines {
        out.extend_from_slice(line.as_bytes());
        line_end(&mut out, had, writer.columns());
    }
    let page = json!({"Items": docs});
    assert_eq!(String::from_utf8(out).unwrap(), render(&page));
    // A key repeated inside an array element: the cell is what the `Value` holds.
    let text = r#"{"Id":"f","G":[{"a":1,"b":2,"a":{"x":[3]}},{"c":1,"c":2}]}"#;
    let mut fresh = RowWriter::default();
    let mut line = String::new();
    let had = fresh.write_row(text, &mut line).unwrap();
    let mut out = fresh.header().into_bytes();
    out.extend_from_slice(line.as_bytes());
    line_end(&mut out, had, fresh.columns());
    let doc: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        render(&json!({ "Items": [doc] }))
    );
    assert!(writer.write_row("{\"Id\": ", &mut String::new()).is_err());
    assert!(writer.write_row("{} x", &mut String::new()).is_err());
}

#[test]
fn rendering_from_the_text_matches_rendering_the_value() {
    let pages = [
        json!({"TotalResults": 2, "Items": [
            {"Id": "a", "Detail": {"de": {"Title": "Hütte, \"alt\""}}, "Tags": ["x", "y"], "N": null},
            {"Id": "b", "Active": true, "Detail": {"it": {"Title": "line\nbreak"}}, "G": [{"L": 1}], "E": {}}
        ]}),
        json!({"Items": [
            {"Id": "c", "a": {"b": 1}, "a.b": 2.5, "n": -3, "f": 1e300, "x": [null, true, 1.5, "s|t", [1, [2]], {"k": {"é\"": null}}], "e": [], "o": {"p": {}}},
            "plain", 7, null, [1, 2], {}, {"": 1, "k": {"": {"z": "w"}}}
        ], "Next": {"Items": 1}}),
        json!([{"Id": "d", "v": "\"q\""}, {"Id": "e"}]),
        json!({"Items": []}),
    ];
    for page in pages {
        let text = serde_json::to_string(&page).unwrap();
        assert_eq!(
            render_slice(text.as_bytes()).as_deref(),
            Some(render(&page).as_str()),
            "{text}"
        );
    }
    // Not a list: left to `render`.
    assert_eq!(render_slice(br#"{"Id": "x"}"#), None);
    assert_eq!(render_slice(br#"{"Items": 3}"#), None);
    assert_eq!(render_slice(br#""x""#), None);
    assert_eq!(render_slice(br#"{"Items": [] } x"#), None);
}
