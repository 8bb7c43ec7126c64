//! History rows of a push in PostgreSQL's binary `COPY` format, cut into messages of a
//! bounded size: the push sends one message while the next is encoded, and the extra
//! memory of a large push stays one message.
//!
//! The format: a header (signature, flags, extension length), per row the number of
//! fields and each field as its length (-1 for NULL) and its bytes in the type's binary
//! send form (big-endian `int8` and `float8`, UTF-8 `text`), then a trailer (-1).
//!
//! Owns: the byte layout of the rows `push` copies into `ts_history`. Must not: decide
//! which rows are written (`timeseries::plan` does) or talk to the server.

use bytes::{BufMut, Bytes, BytesMut};

use crate::timeseries::{value_columns, RecordValue};

/// The columns of `ts_history` a push writes, in the order rows are encoded.
pub(super) const HISTORY_COLUMNS: &str =
    "ts_history (series_id, timestamp, created_on, double_value, string_value, json_value, provenance_id)";

/// Bytes of COPY data per message (a message grows past it by at most one row).
pub(super) const MESSAGE_BYTES: usize = 1 << 20;

const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

/// One history row: series id, timestamp and value (the push's creation time and
/// provenance are the same for every row).
pub(super) type HistoryRow<'r> = (i64, i64, &'r RecordValue);

/// Encodes `rows` into messages of about `message_bytes`, each handed to the caller in
/// turn; the first starts with the header, the last ends with the trailer.
pub(super) struct HistoryCopy<I> {
    rows: I,
    created_on: i64,
    provenance: Option<i64>,
    message_bytes: usize,
    buf: BytesMut,
    done: bool,
}

impl<'r, I: Iterator<Item = HistoryRow<'r>>> HistoryCopy<I> {
    pub(super) fn new(
        rows: I,
        created_on: i64,
        provenance: Option<i64>,
        message_bytes: usize,
    ) -> Self {
        let mut buf = BytesMut::with_capacity(message_bytes.max(64) + 256);
        buf.put_slice(SIGNATURE);
        buf.put_i32(0); // flags: no OIDs
        buf.put_i32(0); // no header extension
        HistoryCopy {
            rows,
            created_on,
            provenance,
            message_bytes: message_bytes.max(1),
            buf,
            done: false,
        }
    }

    fn put_row(&mut self, (series, timestamp, value): HistoryRow<'_>) {
        let (double, string, json) = value_columns(value);
        // The fixed-size fields (count, series, timestamp, creation time, double) are
        // laid out on the stack and copied in one piece: most rows are only these and
        // three NULLs.
        let mut head = [0u8; 50];
        head[..2].copy_from_slice(&7i16.to_be_bytes());
        for (at, v) in [(2, series), (14, timestamp), (26, self.created_on)] {
            head[at..at + 4].copy_from_slice(&8i32.to_be_bytes());
            head[at + 4..at + 12].copy_from_slice(&v.to_be_bytes());
        }
        let len = match double {
            Some(d) => {
                head[38..42].copy_from_slice(&8i32.to_be_bytes());
                head[42..50].copy_from_slice(&d.to_be_bytes());
                50
            }
            None => {
                head[38..42].copy_from_slice(&(-1i32).to_be_bytes());
                42
            }
        };
        let b = &mut self.buf;
        b.put_slice(&head[..len]);
        put_text(b, string);
        put_text(b, json);
        match self.provenance {
            Some(p) => put_int8(b, p),
            None => b.put_i32(-1),
        }
    }
}

impl<'r, I: Iterator<Item = HistoryRow<'r>>> Iterator for HistoryCopy<I> {
    type Item = Bytes;

    /// The next message; `None` after the one with the trailer.
    fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        while self.buf.len() < self.message_bytes {
            match self.rows.next() {
                Some(row) => self.put_row(row),
                None => {
                    self.buf.put_i16(-1);
                    self.done = true;
                    break;
                }
            }
        }
        Some(self.buf.split().freeze())
    }
}

fn put_int8(b: &mut BytesMut, v: i64) {
    b.put_i32(8);
    b.put_i64(v);
}

fn put_text(b: &mut BytesMut, v: Option<&str>) {
    match v {
        Some(s) => {
            // A record's text is bounded far below 2 GiB by the request limits.
            b.put_i32(i32::try_from(s.len()).unwrap_or(i32::MAX));
            b.put_slice(s.as_bytes());
        }
        None => b.put_i32(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the messages back field by field: (series, timestamp, created, double,
    /// string, json, provenance) per row.
    #[allow(clippy::type_complexity)]
    fn decode(
        data: &[u8],
    ) -> Vec<(
        i64,
        i64,
        i64,
        Option<f64>,
        Option<String>,
        Option<String>,
        Option<i64>,
    )> {
        assert_eq!(&data[..11], SIGNATURE);
        let mut at = 19;
        let take = |at: &mut usize, n: usize| {
            let s = &data[*at..*at + n];
            *at += n;
            s
        };
        let mut rows = Vec::new();
        loop {
            let fields = i16::from_be_bytes(take(&mut at, 2).try_into().unwrap());
            if fields == -1 {
                assert_eq!(at, data.len(), "nothing after the trailer");
                return rows;
            }
            assert_eq!(fields, 7);
            let mut raw: Vec<Option<&[u8]>> = Vec::new();
            for _ in 0..7 {
                let len = i32::from_be_bytes(take(&mut at, 4).try_into().unwrap());
                raw.push((len >= 0).then(|| take(&mut at, len as usize)));
            }
            let int = |v: Option<&[u8]>| v.map(|b| i64::from_be_bytes(b.try_into().unwrap()));
            let text = |v: Option<&[u8]>| v.map(|b| String::from_utf8(b.to_vec()).unwrap());
            rows.push((
                int(raw[0]).unwrap(),
                int(raw[1]).unwrap(),
                int(raw[2]).unwrap(),
                raw[3].map(|b| f64::from_be_bytes(b.try_into().unwrap())),
                text(raw[4]),
                text(raw[5]),
                int(raw[6]),
            ));
        }
    }

    #[test]
    fn every_row_comes_back_in_order_across_bounded_messages() {
        let values: Vec<RecordValue> = (0..1000)
            .map(|k| match k % 3 {
                0 => RecordValue::Double(k as f64 / 4.0),
                1 => RecordValue::Text(format!("text {k} ü")),
                _ => RecordValue::Json(format!("{{\"k\":{k}}}")),
            })
            .collect();
        let rows = values
            .iter()
            .enumerate()
            .map(|(k, v)| (k as i64 / 10, 1_700_000_000_000 + k as i64, v));
        let messages: Vec<Bytes> = HistoryCopy::new(rows, 42, Some(7), 4096).collect();
        assert!(messages.len() > 5, "{} messages", messages.len());
        // A message exceeds the bound by at most one row.
        assert!(messages.iter().all(|m| m.len() < 4096 + 100));
        let data: Vec<u8> = messages.concat();
        let decoded = decode(&data);
        assert_eq!(decoded.len(), 1000);
        for (k, row) in decoded.iter().enumerate() {
            assert_eq!(row.0, k as i64 / 10);
            assert_eq!(row.1, 1_700_000_000_000 + k as i64);
            assert_eq!(row.2, 42);
            assert_eq!(row.6, Some(7));
            let (d, s, j) = value_columns(&values[k]);
            assert_eq!(row.3, d);
            assert_eq!(row.4.as_deref(), s);
            assert_eq!(row.5.as_deref(), j);
        }
    }

    #[test]
    fn no_rows_is_a_header_and_a_trailer_without_provenance() {
        let messages: Vec<Bytes> =
            HistoryCopy::new(std::iter::empty(), 1, None, MESSAGE_BYTES).collect();
        assert_eq!(messages.len(), 1);
        assert!(decode(&messages[0]).is_empty());
        let v = RecordValue::Double(1.5);
        let one: Vec<Bytes> =
            HistoryCopy::new([(3, 4, &v)].into_iter(), 1, None, MESSAGE_BYTES).collect();
        assert_eq!(decode(&one.concat())[0].6, None);
    }
}
