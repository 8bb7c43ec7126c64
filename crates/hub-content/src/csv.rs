//! CSV rendering of a list (its `Items`) or of one document: one row per item; the
//! header is the union of the keys of all rows of the page in first-seen order; nested
//! objects become dotted columns (`Detail.de.Title`); arrays of scalars are joined with
//! `|`, arrays holding objects or arrays are written as compact JSON elements joined with
//! `|`; null is an empty field. RFC 4180 quoting, CRLF line ends.

use std::collections::HashMap;

use serde_json::Value;

pub fn render(value: &Value) -> String {
    let items: Vec<&Value> = match value {
        Value::Object(o) if o.get("Items").is_some_and(Value::is_array) => o["Items"].as_array().into_iter().flatten().collect(),
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut columns: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<Vec<(usize, String)>> = Vec::with_capacity(items.len());
    for item in items {
        let mut row = Vec::new();
        let mut prefix = String::new();
        flatten(item, &mut prefix, &mut |key, text| {
            let i = *index.entry(key.to_string()).or_insert_with(|| {
                columns.push(key.to_string());
                columns.len() - 1
            });
            row.push((i, text));
        });
        rows.push(row);
    }
    let mut out = String::with_capacity(rows.iter().flatten().map(|(_, t)| t.len() + 1).sum::<usize>() + 64 * columns.len());
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_field(&mut out, c);
    }
    out.push_str("\r\n");
    let mut line: Vec<Option<&str>> = vec![None; columns.len()];
    for row in &rows {
        line.iter_mut().for_each(|f| *f = None);
        for (i, text) in row {
            line[*i] = Some(text);
        }
        for (i, field) in line.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_field(&mut out, field.unwrap_or(""));
        }
        out.push_str("\r\n");
    }
    out
}

fn flatten(value: &Value, prefix: &mut String, emit: &mut dyn FnMut(&str, String)) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let len = prefix.len();
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(k);
                flatten(v, prefix, emit);
                prefix.truncate(len);
            }
        }
        other => emit(if prefix.is_empty() { "value" } else { prefix }, scalar_text(other)),
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Object(o) if o.is_empty() => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Object(_) | Value::Array(_) => v.to_string(),
                other => scalar_text(other),
            })
            .collect::<Vec<_>>()
            .join("|"),
        other => other.to_string(),
    }
}

/// RFC 4180: quote fields holding a comma, a quote, CR or LF; double inner quotes.
fn push_field(out: &mut String, text: &str) {
    if text.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

#[cfg(test)]
mod tests {
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
}
