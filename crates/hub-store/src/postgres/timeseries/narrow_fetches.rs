//! The portals of a narrow history read on PostgreSQL (`super`), each a time window of
//! one series, fetched a part at a time as the merge asks for a series' next row.
//!
//! Must not: decide what to read, or order rows across series (the merge does).

use std::collections::VecDeque;
use std::pin::Pin;

use futures::{FutureExt, StreamExt};
use tokio_postgres::{Portal, RowStream};

use super::super::{query_error, row_cells};
use crate::postgres::session::Tx;
use crate::timeseries::narrow::Pull;
use crate::timeseries::{Cell, SharedText};
use crate::Result;

/// One time window of a series' history: its portal (none: its rows come in one stream,
/// already asked for) and the rows read of it.
pub(super) struct Window {
    portal: Option<Portal>,
    buffered: VecDeque<Vec<Cell>>,
    /// A part of it is in flight.
    asked: bool,
    /// A part came back short: the portal has no more rows.
    ended: bool,
}

/// A series' windows, merged in time order: `current` is the one its rows come from.
pub(super) struct SeriesRead {
    windows: Vec<Window>,
    current: usize,
    shared: SharedText,
}

impl Window {
    pub(super) fn new(portal: Option<Portal>, asked: bool) -> Self {
        Window {
            portal,
            buffered: VecDeque::new(),
            asked,
            ended: false,
        }
    }
}

impl SeriesRead {
    pub(super) fn of(windows: Vec<Window>) -> Self {
        SeriesRead {
            windows,
            current: 0,
            shared: SharedText::default(),
        }
    }
}

/// The parts of the portals asked for and not yet read, and the rows read. The
/// connection answers in the order it was asked, so the part in front is read first
/// (its rows kept for later when another series or window is wanted); a part is read as
/// its rows arrive, so Hub decodes and merges while PostgreSQL still produces the rest.
/// A series' next window is asked for while its current one is read, so PostgreSQL
/// reads and sorts it meanwhile.
pub(super) struct Fetches {
    /// Rows asked for per part.
    pub(super) size: i32,
    /// (series, window, its part's rows, rows read of it so far), in the order asked.
    pub(super) in_flight: VecDeque<(usize, usize, Pin<Box<RowStream>>, usize)>,
    pub(super) series: Vec<SeriesRead>,
}

impl Fetches {
    /// Series k's next row, the end of its history, or `Pending` (fetch first).
    pub(super) fn pull(&mut self, k: usize) -> Pull {
        let s = &mut self.series[k];
        loop {
            let w = &mut s.windows[s.current];
            if let Some(row) = w.buffered.pop_front() {
                return Pull::Row(row);
            }
            if !w.ended {
                return Pull::Pending;
            }
            if s.current + 1 == s.windows.len() {
                return Pull::End;
            }
            s.current += 1;
        }
    }

    /// Asks for the next part of window w of series k (answered after those in flight),
    /// unless one is in flight or the window has ended.
    pub(super) async fn send(&mut self, tx: &Tx<'_>, k: usize, w: usize) -> Result<()> {
        let Some(window) = self.series[k].windows.get_mut(w) else {
            return Ok(());
        };
        if window.asked || window.ended {
            return Ok(());
        }
        let Some(portal) = &window.portal else {
            return Ok(());
        };
        let rows = tx
            .fetch_stream(portal, self.size)
            .await
            .map_err(query_error)?;
        window.asked = true;
        self.in_flight.push_back((k, w, Box::pin(rows), 0));
        Ok(())
    }

    /// Asks for series k's current window and the one after it, ahead.
    pub(super) async fn ask(&mut self, tx: &Tx<'_>, k: usize) -> Result<()> {
        let current = self.series[k].current;
        self.send(tx, k, current).await?;
        self.send(tx, k, current + 1).await
    }

    /// A part of window w of series k came to its end after `read` rows.
    fn part_ended(&mut self, k: usize, w: usize, read: usize) {
        let window = &mut self.series[k].windows[w];
        window.asked = false;
        window.ended = read < self.size as usize || window.portal.is_none();
    }

    /// Reads at least one more row of series k's current window, or learns that it has
    /// ended: parts in front of its own are read to their ends first; its part's rows
    /// already received are taken too, without waiting for more.
    pub(super) async fn more(&mut self, tx: &Tx<'_>, k: usize) -> Result<()> {
        self.ask(tx, k).await?;
        let current = self.series[k].current;
        // Series k's current part is in flight until its end is read below.
        while let Some((series, window, rows, read)) = self.in_flight.front_mut() {
            let (series, window) = (*series, *window);
            let wanted = (series, window) == (k, current);
            match rows.next().await {
                Some(row) => {
                    *read += 1;
                    let row = row.map_err(query_error)?;
                    let s = &mut self.series[series];
                    let cells = row_cells(&row, &mut s.shared)?;
                    s.windows[window].buffered.push_back(cells);
                    if wanted {
                        // A finished part must not be polled again (its answer channel
                        // is closed): its end is taken here too when it has arrived.
                        loop {
                            match rows.next().now_or_never() {
                                Some(Some(row)) => {
                                    *read += 1;
                                    let row = row.map_err(query_error)?;
                                    let s = &mut self.series[k];
                                    let cells = row_cells(&row, &mut s.shared)?;
                                    s.windows[current].buffered.push_back(cells);
                                }
                                Some(None) => {
                                    let read = *read;
                                    self.in_flight.pop_front();
                                    self.part_ended(k, current, read);
                                    return Ok(());
                                }
                                None => return Ok(()),
                            }
                        }
                    }
                }
                None => {
                    let read = *read;
                    self.in_flight.pop_front();
                    self.part_ended(series, window, read);
                    if wanted {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }
}
