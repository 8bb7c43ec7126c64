//! Flat rows written as JSON bytes, batch by batch, byte-identical to serializing
//! [`crate::shape::flat`]'s value.
//!
//! A history answer's rows repeat their series' columns (station, data type, period,
//! metadata: most of a row's bytes) on every row, and consecutive rows usually differ
//! only in their time and value. So each field's bytes are written after a comma of
//! their own, the previous row's fields are kept, and every run of fields whose cells
//! equal the previous row's is copied from there in one piece; only the changed fields
//! are rendered. The first field's comma becomes the row's `{`.
//!
//! Owns: [`FlatWriter`]. Must not: decide what a field renders to
//! ([`crate::shape`] does) or know where rows come from.

use std::sync::Arc;

use hub_query::timeseries::{Kind, OutColumn};
use hub_store::timeseries::Cell;
use serde_json::Value;

use crate::params::Zone;
use crate::shape::{flat, render_into, RenderCache};

/// A cell of the previous row, kept to tell whether the next row's cell is the same. A
/// text is kept by its shared pointer: cursors hand a column's repeated text out as the
/// same shared cell, and holding it keeps the pointer from being reused.
#[derive(Clone)]
enum Seen {
    Nothing,
    Null,
    Int(i64),
    Real(u64),
    Text(Arc<str>),
}

impl Seen {
    fn same(&self, cell: &Cell) -> bool {
        match (self, cell) {
            (Seen::Null, Cell::Null) => true,
            (Seen::Int(a), Cell::Int(b)) => a == b,
            (Seen::Real(a), Cell::Real(b)) => *a == b.to_bits(),
            (Seen::Text(a), Cell::Text(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    fn of(cell: &Cell) -> Seen {
        match cell {
            Cell::Null => Seen::Null,
            Cell::Int(i) => Seen::Int(*i),
            Cell::Real(r) => Seen::Real(r.to_bits()),
            Cell::Text(t) => Seen::Text(Arc::clone(t)),
        }
    }
}

/// One visible column.
struct Field {
    /// `,"key":`
    prefix: Vec<u8>,
    kind: Kind,
    /// Its cells in a row.
    cells: std::ops::Range<usize>,
    /// A value in it makes the row worth writing (`_timestamp` alone does not).
    counts: bool,
}

/// Writes flat rows batch by batch as the elements of one JSON array (the caller writes
/// the brackets): a streamed answer holds one batch, not the whole array.
pub struct FlatWriter {
    /// Kept for rows written through [`flat`]'s value map (`by_value`).
    columns: Vec<OutColumn>,
    zone: Zone,
    shownull: bool,
    fields: Vec<Field>,
    cache: RenderCache,
    /// The previous row's cells (by cell position) and its fields' bytes: field `f`
    /// is `previous[ends[f - 1]..ends[f]]` (empty when omitted as null).
    seen: Vec<Seen>,
    previous: Vec<u8>,
    ends: Vec<usize>,
    /// Per field, whether the previous row's value was not null.
    valued: Vec<bool>,
    /// The row being written's field ends (swapped with `ends`).
    next_ends: Vec<usize>,
    wrote: bool,
    /// Two visible columns share a key: rows go through [`flat`]'s value map, which keeps
    /// the first position and the last value.
    by_value: bool,
}

/// The most a batch reserves ahead of its rows (a batch of wide rows grows past it).
const MAX_RESERVED: usize = 4 << 20;

impl FlatWriter {
    pub fn new(columns: &[OutColumn], zone: Zone, shownull: bool) -> Self {
        let mut seen_keys = std::collections::HashSet::new();
        let by_value = !columns
            .iter()
            .filter(|c| !c.hidden)
            .all(|c| seen_keys.insert(c.key.as_str()));
        let mut fields = Vec::with_capacity(columns.len());
        let mut off = 0;
        for c in columns {
            let width = c.kind.width();
            if !c.hidden {
                let mut prefix = vec![b','];
                serde_json::to_writer(&mut prefix, &c.key).expect("writing to a Vec");
                prefix.push(b':');
                fields.push(Field {
                    prefix,
                    kind: c.kind,
                    cells: off..off + width,
                    counts: c.key != "_timestamp",
                });
            }
            off += width;
        }
        let n = fields.len();
        FlatWriter {
            columns: columns.to_vec(),
            zone,
            shownull,
            fields,
            cache: RenderCache::default(),
            seen: vec![Seen::Nothing; off],
            previous: Vec::new(),
            ends: vec![0; n],
            valued: vec![false; n],
            next_ends: vec![0; n],
            wrote: false,
            by_value,
        }
    }

    /// Appends the array elements of `rows`.
    pub fn rows(&mut self, rows: &[Vec<Cell>], out: &mut Vec<u8>) {
        if self.by_value {
            if let Value::Array(items) = flat(&self.columns, rows, self.zone, self.shownull) {
                for item in items {
                    if self.wrote {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut *out, &item).expect("writing to a Vec");
                    self.wrote = true;
                }
            }
            return;
        }
        let mut rows = rows.iter();
        let Some(first) = rows.next() else {
            return;
        };
        let before = out.len();
        self.row(first, out);
        // A batch's rows write alike: room for the rest as the first wrote, so the chunk
        // is not grown (and copied) a dozen times on the way.
        let each = out.len() - before;
        out.reserve(((each + each / 8) * rows.len()).min(MAX_RESERVED));
        for row in rows {
            self.row(row, out);
        }
    }

    fn row(&mut self, row: &[Cell], out: &mut Vec<u8>) {
        let start = out.len();
        if self.wrote {
            out.push(b',');
        }
        let body = out.len();
        let mut any = false;
        // Start (in `previous`) of the run of unchanged fields not yet copied.
        let mut run: Option<usize> = None;
        for (f, field) in self.fields.iter().enumerate() {
            let cells = &row[field.cells.clone()];
            let was = &self.seen[field.cells.clone()];
            let unchanged = was.iter().zip(cells).all(|(s, c)| s.same(c));
            let prev_start = if f == 0 { 0 } else { self.ends[f - 1] };
            if unchanged {
                // Copied with its run later: its end counts the run's bytes not yet written.
                let from = *run.get_or_insert(prev_start);
                self.next_ends[f] = out.len() - body + (self.ends[f] - from);
            } else {
                if let Some(from) = run.take() {
                    out.extend_from_slice(&self.previous[from..prev_start]);
                }
                let mark = out.len();
                out.extend_from_slice(&field.prefix);
                let value = out.len();
                render_into(field.kind, cells, self.zone, out, &mut self.cache);
                let null = &out[value..] == b"null";
                self.valued[f] = !null;
                if null && !self.shownull {
                    out.truncate(mark);
                }
                for (s, c) in self.seen[field.cells.clone()].iter_mut().zip(cells) {
                    *s = Seen::of(c);
                }
                self.next_ends[f] = out.len() - body;
            }
            any |= self.valued[f] && field.counts;
        }
        if let (Some(from), Some(&end)) = (run, self.ends.last()) {
            out.extend_from_slice(&self.previous[from..end]);
        }
        self.previous.clear();
        self.previous.extend_from_slice(&out[body..]);
        std::mem::swap(&mut self.ends, &mut self.next_ends);
        if !(any || self.shownull) {
            out.truncate(start);
            return;
        }
        // The first field's comma opens the object.
        if out.len() > body {
            out[body] = b'{';
        } else {
            out.push(b'{');
        }
        out.push(b'}');
        self.wrote = true;
    }
}

#[cfg(test)]
#[path = "flat_writer_tests.rs"]
mod tests;
