//! CSV rendering of a list (its `Items`) or of one document: one row per item; the
//! header is the union of the keys of all rows of the page in first-seen order; nested
//! objects become dotted columns (`Detail.de.Title`); arrays of scalars are joined with
//! `|`, arrays holding objects or arrays are written as compact JSON elements joined with
//! `|`; null is an empty field. RFC 4180 quoting, CRLF line ends.

use std::collections::HashMap;

use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Number, Value};

use crate::compact_json::{push_number, CompactJson};

pub fn render(value: &Value) -> String {
    let items: Vec<&Value> = match value {
        Value::Object(o) if o.get("Items").is_some_and(Value::is_array) => {
            o["Items"].as_array().into_iter().flatten().collect()
        }
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
    let mut out = String::with_capacity(
        rows.iter()
            .flatten()
            .map(|(_, t)| t.len() + 1)
            .sum::<usize>()
            + 64 * columns.len(),
    );
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

/// [`render`] straight from the JSON text: flattens while parsing, into one buffer of
/// cell texts, without building the documents as `Value`s (for a page of 1,000 documents
/// that was most of the time). `None` when the text is not a list envelope or an array
/// (or not JSON); the caller then parses it and calls [`render`], which gives the same
/// output for every input this accepts.
pub fn render_slice(json: &[u8]) -> Option<String> {
    let mut sheet = Sheet::default();
    let mut de = serde_json::Deserializer::from_slice(json);
    de.deserialize_any(Top {
        sheet: &mut sheet,
        items_seen: false,
    })
    .ok()?;
    de.end().ok()?;
    Some(sheet.write())
}

/// Flattened rows: cell `(column, start, end)` ranges into `text`; `row_ends[r]` is the
/// end of row `r` in `cells`.
#[derive(Default)]
struct Sheet {
    columns: Vec<String>,
    index: HashMap<String, usize>,
    text: String,
    cells: Vec<(usize, usize, usize)>,
    row_ends: Vec<usize>,
    /// Per column, the column that followed it last (a guess for the next key).
    next: Vec<usize>,
}

impl Sheet {
    /// Records the text from `start` to the end of `text` as the cell of `key`.
    fn emit(&mut self, key: &str, start: usize) {
        let key = if key.is_empty() { "value" } else { key };
        // Documents of a page mostly share their key order: try the column that followed
        // the previous cell's column last time before hashing the key.
        let previous = match self.cells.last() {
            Some(&(c, ..)) if self.row_ends.last() != Some(&self.cells.len()) => c,
            _ => usize::MAX,
        };
        let hinted = self
            .next
            .get(previous)
            .copied()
            .filter(|&c| c < self.columns.len() && self.columns[c] == key);
        let column = match hinted.or_else(|| self.index.get(key).copied()) {
            Some(i) => i,
            None => {
                self.columns.push(key.to_string());
                self.index.insert(key.to_string(), self.columns.len() - 1);
                self.next.push(usize::MAX);
                self.columns.len() - 1
            }
        };
        if previous != usize::MAX {
            self.next[previous] = column;
        }
        self.cells.push((column, start, self.text.len()));
    }

    fn write(&self) -> String {
        let mut out =
            String::with_capacity(self.text.len() + self.cells.len() + 64 * self.columns.len());
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_field(&mut out, c);
        }
        out.push_str("\r\n");
        let mut line: Vec<Option<(usize, usize)>> = vec![None; self.columns.len()];
        let mut from = 0;
        for &to in &self.row_ends {
            line.iter_mut().for_each(|f| *f = None);
            for &(i, start, end) in &self.cells[from..to] {
                line[i] = Some((start, end));
            }
            from = to;
            for (i, field) in line.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some((start, end)) = *field {
                    push_field(&mut out, &self.text[start..end]);
                }
            }
            out.push_str("\r\n");
        }
        out
    }
}

/// [`render`] one row at a time, for lists too long to hold (`pagesize=-1`): each
/// document becomes its line for the columns known so far. Columns only ever join at the
/// end (first-seen order), so a line written when there were `k` columns is the final
/// line but for `columns() - k` empty fields at its end, which [`line_end`] adds once the
/// last row has set the header. Lines plus their endings equal [`render`]'s rows.
#[derive(Default)]
pub(crate) struct RowWriter {
    sheet: Sheet,
    line: Vec<Option<(usize, usize)>>,
}

impl RowWriter {
    /// Flattens one document's JSON text and appends its fields (no line end) to `out`;
    /// the number of columns the line has.
    pub(crate) fn write_row(
        &mut self,
        json: &str,
        out: &mut String,
    ) -> Result<usize, serde_json::Error> {
        let sheet = &mut self.sheet;
        sheet.text.clear();
        sheet.cells.clear();
        sheet.row_ends.clear();
        let mut prefix = String::new();
        let mut de = serde_json::Deserializer::from_str(json);
        Node {
            sheet: &mut *sheet,
            prefix: &mut prefix,
        }
        .deserialize(&mut de)?;
        de.end()?;
        sheet.row_ends.push(sheet.cells.len());
        let columns = sheet.columns.len();
        self.line.clear();
        self.line.resize(columns, None);
        for &(i, start, end) in &sheet.cells {
            self.line[i] = Some((start, end));
        }
        for (i, cell) in self.line.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if let Some((start, end)) = *cell {
                push_field(out, &sheet.text[start..end]);
            }
        }
        Ok(columns)
    }

    /// Columns seen so far.
    pub(crate) fn columns(&self) -> usize {
        self.sheet.columns.len()
    }

    /// The header line (with its line end) of every column seen.
    pub(crate) fn header(&self) -> String {
        let mut out = String::new();
        for (i, c) in self.sheet.columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_field(&mut out, c);
        }
        out.push_str("\r\n");
        out
    }
}

/// What follows a line written with `had` of `columns` columns: its missing fields at
/// the end, then the line end.
pub(crate) fn line_end(out: &mut Vec<u8>, had: usize, columns: usize) {
    out.extend(std::iter::repeat_n(b',', columns.saturating_sub(had)));
    out.extend_from_slice(b"\r\n");
}

/// The document: an envelope (rows are `Items`) or an array (rows are its elements).
struct Top<'a> {
    sheet: &'a mut Sheet,
    items_seen: bool,
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list envelope or an array")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "Items" {
                if self.items_seen {
                    return Err(de::Error::custom("Items twice"));
                }
                self.items_seen = true;
                map.next_value_seed(Rows {
                    sheet: &mut *self.sheet,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !self.items_seen {
            // One row of the object itself: left to `render`.
            return Err(de::Error::custom("no Items"));
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Rows { sheet: self.sheet }.visit_seq(seq)
    }
}

/// An array whose elements are rows.
struct Rows<'a> {
    sheet: &'a mut Sheet,
}

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut prefix = String::new();
        while seq
            .next_element_seed(Node {
                sheet: &mut *self.sheet,
                prefix: &mut prefix,
            })?
            .is_some()
        {
            self.sheet.row_ends.push(self.sheet.cells.len());
        }
        Ok(())
    }
}

/// A value at `prefix` (dotted keys) of a row: nested objects recurse, anything else is
/// one cell, as [`flatten`] and [`scalar_text`] do.
struct Node<'a> {
    sheet: &'a mut Sheet,
    prefix: &'a mut String,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_> {
    fn cell(self, text: impl FnOnce(&mut String)) {
        let start = self.sheet.text.len();
        text(&mut self.sheet.text);
        self.sheet.emit(self.prefix, start);
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut any = false;
        loop {
            let len = self.prefix.len();
            if !self.prefix.is_empty() {
                self.prefix.push('.');
            }
            if map.next_key_seed(KeyInto(&mut *self.prefix))?.is_none() {
                self.prefix.truncate(len);
                break;
            }
            any = true;
            map.next_value_seed(Node {
                sheet: &mut *self.sheet,
                prefix: &mut *self.prefix,
            })?;
            self.prefix.truncate(len);
        }
        if !any {
            self.cell(|_| {});
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let start = self.sheet.text.len();
        let mut first = true;
        loop {
            let at = self.sheet.text.len();
            if !first {
                self.sheet.text.push('|');
            }
            if seq
                .next_element_seed(Element(&mut self.sheet.text))?
                .is_none()
            {
                self.sheet.text.truncate(at);
                break;
            }
            first = false;
        }
        self.sheet.emit(self.prefix, start);
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.cell(|t| t.push_str(v));
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.cell(|t| t.push_str(if v { "true" } else { "false" }));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.cell(|t| push_number(t, v.into()));
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.cell(|t| push_number(t, v.into()));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let n = Number::from_f64(v).ok_or_else(|| E::custom("not a finite number"))?;
        self.cell(|t| push_number(t, n));
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.cell(|_| {});
        Ok(())
    }
}

/// Appends an object key to the prefix.
struct KeyInto<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for KeyInto<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
}

/// Appends one array element's text: scalars as [`scalar_text`], objects and arrays as
/// compact JSON.
struct Element<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        CompactJson(self.0).visit_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        CompactJson(self.0).visit_seq(seq)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }

    // Scalars other than strings are written as in compact JSON: one body for both.
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        CompactJson(self.0).visit_bool(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        CompactJson(self.0).visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        CompactJson(self.0).visit_u64(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        CompactJson(self.0).visit_f64(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
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
        other => emit(
            if prefix.is_empty() { "value" } else { prefix },
            scalar_text(other),
        ),
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
    // No early exit: the test of every byte compiles to vector code, several times as
    // fast as stopping at the first hit for cells of a few hundred bytes.
    let special = text.bytes().fold(false, |any, b| {
        any | matches!(b, b',' | b'"' | b'\r' | b'\n')
    });
    if !special {
        out.push_str(text);
        return;
    }
    out.push('"');
    let mut rest = text;
    while let Some(quote) = rest.find('"') {
        out.push_str(&rest[..=quote]);
        out.push('"');
        rest = &rest[quote + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

#[cfg(test)]
mod tests;
