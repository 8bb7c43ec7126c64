//! The `fields` projection language of the Content API: a comma-separated list of
//! paths such as `Detail.de.Title`, `ImageGallery[0]`, `HubTags.[*].Id` or
//! `Mapping['tirol.mapservices.eu']`.
//!
//! Selection semantics: a path without a wildcard yields the value it reaches, or
//! `null`; a path with a wildcard (`[*]`, `[]`) yields an array of every value it
//! reaches (possibly empty), so a client always gets the same JSON type for a path.

use serde_json::Value;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
    Wildcard,
}

/// One parsed path; `text` is the path as the client wrote it (the output key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    pub text: String,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("{message} at position {position}")]
pub struct FieldsError {
    /// 1-based character position in the whole parameter value.
    pub position: usize,
    pub message: String,
}

/// Longest `fields` value, in characters; checked before any path is parsed.
pub const MAX_FIELDS_CHARS: usize = 10_000;
/// Most paths in one `fields` value.
pub const MAX_FIELDS: usize = 200;

/// Parses a whole `fields` value. Empty entries (`a,,b`, a trailing comma) are skipped.
pub fn parse_fields(value: &str) -> Result<Vec<FieldPath>, FieldsError> {
    let chars = value.chars().count();
    if chars > MAX_FIELDS_CHARS {
        return Err(FieldsError {
            position: MAX_FIELDS_CHARS + 1,
            message: format!(
                "the value has {chars} characters; at most {MAX_FIELDS_CHARS} are accepted"
            ),
        });
    }
    let entries = value.split(',').filter(|p| !p.trim().is_empty()).count();
    if entries > MAX_FIELDS {
        return Err(FieldsError {
            position: 1,
            message: format!("{entries} paths are too many; at most {MAX_FIELDS} are accepted"),
        });
    }
    let mut paths = Vec::new();
    let mut offset = 0; // characters before the current entry
    for part in value.split(',') {
        let leading = part.chars().take_while(|c| c.is_whitespace()).count();
        let trimmed = part.trim();
        if !trimmed.is_empty() {
            let path = parse_path(trimmed).map_err(|e| FieldsError {
                position: e.position + offset + leading,
                ..e
            })?;
            if !paths.iter().any(|p: &FieldPath| p.text == path.text) {
                paths.push(path);
            }
        }
        offset += part.chars().count() + 1;
    }
    Ok(paths)
}

/// Parses one path; error positions are 1-based within `text`.
pub fn parse_path(text: &str) -> Result<FieldPath, FieldsError> {
    let chars: Vec<char> = text.chars().collect();
    let err = |i: usize, message: &str| FieldsError {
        position: i + 1,
        message: message.to_string(),
    };
    let mut segments = Vec::new();
    let mut i = 0;
    let mut expect_segment = true; // at start or after '.'
    while i < chars.len() {
        match chars[i] {
            '.' => {
                if expect_segment {
                    return Err(err(i, "expected a field name before '.'"));
                }
                expect_segment = true;
                i += 1;
                if i == chars.len() {
                    return Err(err(i - 1, "expected a field name after '.'"));
                }
            }
            '[' => {
                let start = i;
                i += 1;
                match chars.get(i) {
                    Some('*') if chars.get(i + 1) == Some(&']') => {
                        segments.push(Segment::Wildcard);
                        i += 2;
                    }
                    Some(']') => {
                        segments.push(Segment::Wildcard);
                        i += 1;
                    }
                    Some(q @ ('\'' | '"')) => {
                        let quote = *q;
                        let close = chars[i + 1..]
                            .iter()
                            .position(|c| *c == quote)
                            .ok_or_else(|| err(start, "unterminated quoted key"))?;
                        let key: String = chars[i + 1..i + 1 + close].iter().collect();
                        i += close + 2;
                        if chars.get(i) != Some(&']') {
                            return Err(err(i, "expected ']' after a quoted key"));
                        }
                        segments.push(Segment::Key(key));
                        i += 1;
                    }
                    Some(c) if c.is_ascii_digit() => {
                        let digits: String = chars[i..]
                            .iter()
                            .take_while(|c| c.is_ascii_digit())
                            .collect();
                        i += digits.len();
                        if chars.get(i) != Some(&']') {
                            return Err(err(i, "expected ']' after an array index"));
                        }
                        let index = digits
                            .parse()
                            .map_err(|_| err(start + 1, "array index too large"))?;
                        segments.push(Segment::Index(index));
                        i += 1;
                    }
                    None => return Err(err(start, "unterminated '['")),
                    _ => {
                        return Err(err(
                            i,
                            "expected '*', an index or a quoted key inside '[ ]'",
                        ))
                    }
                }
                expect_segment = false;
            }
            ']' | '\'' | '"' => return Err(err(i, &format!("unexpected '{}'", chars[i]))),
            _ => {
                if !expect_segment {
                    return Err(err(i, "expected '.' or '[' between path segments"));
                }
                let name: String = chars[i..]
                    .iter()
                    .take_while(|c| !matches!(c, '.' | '[' | ']' | '\'' | '"'))
                    .collect();
                i += name.chars().count();
                // Documents are stored in Hub's spelling; an ODH name reads the same field.
                let name = hub_model::naming::hub_key(&name)
                    .map(str::to_string)
                    .unwrap_or(name);
                segments.push(Segment::Key(name));
                expect_segment = false;
            }
        }
    }
    if segments.is_empty() {
        return Err(err(0, "empty field path"));
    }
    Ok(FieldPath {
        text: text.to_string(),
        segments,
    })
}

impl FieldPath {
    pub fn has_wildcard(&self) -> bool {
        self.segments.contains(&Segment::Wildcard)
    }

    /// The value this path selects in `doc` (see the module documentation).
    pub fn select(&self, doc: &Value) -> Value {
        let mut matches = Vec::new();
        collect(doc, &self.segments, &mut matches);
        if self.has_wildcard() {
            Value::Array(matches.into_iter().cloned().collect())
        } else {
            matches.into_iter().next().cloned().unwrap_or(Value::Null)
        }
    }
}

fn collect<'a>(value: &'a Value, segments: &[Segment], out: &mut Vec<&'a Value>) {
    let Some((first, rest)) = segments.split_first() else {
        out.push(value);
        return;
    };
    match (first, value) {
        (Segment::Key(k), Value::Object(map)) => {
            if let Some(v) = map.get(k) {
                collect(v, rest, out);
            }
        }
        (Segment::Key(k), Value::Array(items)) => {
            // A numeric segment indexes arrays (`GpsInfo.0.Altitude`).
            if let Some(v) = k.parse::<usize>().ok().and_then(|i| items.get(i)) {
                collect(v, rest, out);
            }
        }
        (Segment::Index(i), Value::Array(items)) => {
            if let Some(v) = items.get(*i) {
                collect(v, rest, out);
            }
        }
        (Segment::Wildcard, Value::Array(items)) => {
            items.iter().for_each(|v| collect(v, rest, out))
        }
        (Segment::Wildcard, Value::Object(map)) => map.values().for_each(|v| collect(v, rest, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_supported_forms() {
        use Segment::*;
        let k = |s: &str| Key(s.to_string());
        let cases: Vec<(&str, Vec<Segment>)> = vec![
            ("Id", vec![k("Id")]),
            ("Detail.de.Title", vec![k("Detail"), k("de"), k("Title")]),
            ("ImageGallery[0]", vec![k("ImageGallery"), Index(0)]),
            ("ImageGallery.[0]", vec![k("ImageGallery"), Index(0)]),
            ("ImageGallery[*]", vec![k("ImageGallery"), Wildcard]),
            ("ImageGallery.[]", vec![k("ImageGallery"), Wildcard]),
            ("HubTags.[*].Id", vec![k("HubTags"), Wildcard, k("Id")]),
            // ODH spellings read the stored (Hub) field; the text stays as written.
            ("ODHTags.[*].Id", vec![k("HubTags"), Wildcard, k("Id")]),
            ("SmgTags", vec![k("SrcTags")]),
            ("Mapping['ODHTags']", vec![k("Mapping"), k("ODHTags")]),
            (
                "Mapping['tirol.mapservices.eu']",
                vec![k("Mapping"), k("tirol.mapservices.eu")],
            ),
            (
                "GpsInfo.0.Altitude",
                vec![k("GpsInfo"), k("0"), k("Altitude")],
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_path(input).unwrap().segments, expected, "{input}");
        }
    }

    #[test]
    fn rejects_malformed_paths_with_positions() {
        let cases = [
            ("Detail..Title", 8),
            (".Id", 1),
            ("Id.", 3),
            ("Images[", 7),
            ("Images[x]", 8),
            ("Images[0", 9),
            ("Mapping['x", 8),
            ("A]", 2),
            ("Images[0]x", 10),
        ];
        for (input, position) in cases {
            let e = parse_path(input).unwrap_err();
            assert_eq!(e.position, position, "{input}: {e}");
        }
    }

    #[test]
    fn positions_count_within_the_whole_parameter() {
        let e = parse_fields("Id, Detail..Title").unwrap_err();
        assert_eq!(e.position, 12);
        assert_eq!(parse_fields("Id,,Shortname,Id,").unwrap().len(), 2);
    }

    #[test]
    fn selects_values_arrays_and_nulls() {
        let doc = json!({
            "Id": "a", "Detail": {"de": {"Title": "Hütte"}},
            "HubTags": [{"Id": "hiking"}, {"Id": "summer"}],
            "Mapping": {"tirol.mapservices.eu": {"id": 3}},
            "GpsInfo": [{"Altitude": 1200}]
        });
        let sel = |p: &str| parse_path(p).unwrap().select(&doc);
        assert_eq!(sel("Detail.de.Title"), json!("Hütte"));
        assert_eq!(sel("Detail.en.Title"), Value::Null);
        assert_eq!(sel("HubTags.[*].Id"), json!(["hiking", "summer"]));
        assert_eq!(sel("HubTags[1].Id"), json!("summer"));
        assert_eq!(sel("Missing[*]"), json!([]));
        assert_eq!(sel("Mapping['tirol.mapservices.eu'].id"), json!(3));
        assert_eq!(sel("GpsInfo.0.Altitude"), json!(1200));
    }
}
