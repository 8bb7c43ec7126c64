//! The field catalogue of the Time Series API: every output name (`scode`, `mvalue`, …),
//! the definition list it belongs to (its prefix family), its kind, and the SQL column
//! expression(s) per dialect. Table layout: see `hub-store`'s migration 2 (`ts_*`).

use std::sync::OnceLock;

use crate::Dialect;

/// Definition lists (the reference's "def lists"); scopes of routes are sets of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DefList {
    Station,
    Parent,
    Datatype,
    Measurement,
    Value,
    Provenance,
    MetadataHistory,
    Edge,
    StationBegin,
    StationEnd,
    Event,
    Location,
}

impl DefList {
    pub fn name(self) -> &'static str {
        match self {
            DefList::Station => "station",
            DefList::Parent => "parent",
            DefList::Datatype => "datatype",
            DefList::Measurement => "measurement",
            DefList::Value => "measurementdouble, measurementstring, measurementjson",
            DefList::Provenance => "provenance",
            DefList::MetadataHistory => "metadatahistory",
            DefList::Edge => "edge",
            DefList::StationBegin => "stationbegin",
            DefList::StationEnd => "stationend",
            DefList::Event => "event",
            DefList::Location => "location",
        }
    }
}

/// How a field's SQL value(s) become JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Bool,
    Int,
    /// Epoch milliseconds, rendered in the request's zone.
    Time,
    /// JSON text.
    Json,
    /// Three columns: x, y, srid → `{x, y, srid}`.
    Point,
    /// GeoJSON geometry (coordinates in EPSG:4326) with bbox and short CRS.
    Geometry,
    /// Three columns: double, string, JSON text → one `mvalue`.
    Value,
}

impl Kind {
    /// Number of SQL columns the field occupies.
    pub fn width(self) -> usize {
        match self {
            Kind::Point | Kind::Value => 3,
            _ => 1,
        }
    }
}

/// One output name.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub list: DefList,
    pub kind: Kind,
    /// Table alias the field lives on (`s`, `p`, `me`, …), for joins.
    pub table: &'static str,
    /// Column name on that table (for Point: the PostGIS column of PostgreSQL; the values
    /// are read from `x, y, srid`).
    pub column: &'static str,
}

impl Field {
    /// SQL expressions of the field's columns (one, or three for Point/Value). Both
    /// dialects read the same columns: the PostgreSQL schema is the SQLite schema's twin
    /// (epoch-ms `bigint` times, x/y/srid coordinates, JSON and GeoJSON kept as text).
    pub fn exprs(&self, dialect: Dialect) -> Vec<String> {
        let t = self.table;
        let c = self.column;
        let _ = dialect;
        match self.kind {
            Kind::Point => vec![format!("{t}.x"), format!("{t}.y"), format!("{t}.srid")],
            Kind::Value => vec![
                "me.double_value".into(),
                "me.string_value".into(),
                "me.json_value".into(),
            ],
            _ => vec![format!("{t}.{c}")],
        }
    }

    /// The single column a filter compares against (raw column, not a rendering).
    pub fn filter_expr(&self, dialect: Dialect) -> String {
        let _ = dialect;
        match self.kind {
            Kind::Point => format!("{}.x", self.table),
            _ => format!("{}.{}", self.table, self.column),
        }
    }

    /// PostgreSQL: the PostGIS column (EPSG:4326) generated from a Point's x/y/srid or a
    /// Geometry's GeoJSON text, for spatial filters.
    pub fn geometry_column(&self) -> String {
        let t = self.table;
        match (self.kind, self.column) {
            (Kind::Point, c) => format!("{t}.{c}"),
            (_, "linegeometry") => format!("{t}.linegeom"),
            _ => format!("{t}.geom"),
        }
    }
}

fn station_fields(
    out: &mut Vec<Field>,
    prefix: &str,
    list: DefList,
    t: &'static str,
    meta: Option<&'static str>,
) {
    for (suffix, kind, column) in [
        ("name", Kind::Text, "name"),
        ("type", Kind::Text, "stationtype"),
        ("code", Kind::Text, "stationcode"),
        ("origin", Kind::Text, "origin"),
        ("active", Kind::Bool, "active"),
        ("available", Kind::Bool, "available"),
        ("coordinate", Kind::Point, "pointprojection"),
    ] {
        out.push(Field {
            name: format!("{prefix}{suffix}"),
            list,
            kind,
            table: t,
            column,
        });
    }
    if let Some(m) = meta {
        out.push(Field {
            name: format!("{prefix}metadata"),
            list,
            kind: Kind::Json,
            table: m,
            column: "json",
        });
    }
}

/// Every output name with a column.
pub fn fields() -> &'static [Field] {
    static FIELDS: OnceLock<Vec<Field>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let mut v = Vec::new();
        station_fields(&mut v, "s", DefList::Station, "s", Some("m"));
        station_fields(&mut v, "p", DefList::Parent, "p", Some("pm"));
        station_fields(&mut v, "sb", DefList::StationBegin, "o", None);
        station_fields(&mut v, "se", DefList::StationEnd, "d", None);
        let mut f = |name: &str, list, kind, table, column| {
            v.push(Field {
                name: name.into(),
                list,
                kind,
                table,
                column,
            })
        };
        use DefList::*;
        f("tname", Datatype, Kind::Text, "t", "cname");
        f("tunit", Datatype, Kind::Text, "t", "cunit");
        f("ttype", Datatype, Kind::Text, "t", "rtype");
        f("tdescription", Datatype, Kind::Text, "t", "description");
        f("tmetadata", Datatype, Kind::Json, "tm", "json");
        f("mvalidtime", Measurement, Kind::Time, "me", "timestamp");
        f(
            "mtransactiontime",
            Measurement,
            Kind::Time,
            "me",
            "created_on",
        );
        f("mperiod", Measurement, Kind::Int, "ts", "period");
        f("mvalue", Value, Kind::Value, "me", "value");
        f("prname", Provenance, Kind::Text, "pr", "data_collector");
        f(
            "prversion",
            Provenance,
            Kind::Text,
            "pr",
            "data_collector_version",
        );
        f("prlineage", Provenance, Kind::Text, "pr", "lineage");
        f("mhmetadata", MetadataHistory, Kind::Json, "mh", "json");
        f(
            "mhtransactiontime",
            MetadataHistory,
            Kind::Time,
            "mh",
            "created_on",
        );
        f("ename", Edge, Kind::Text, "i", "name");
        f("etype", Edge, Kind::Text, "i", "stationtype");
        f("ecode", Edge, Kind::Text, "i", "stationcode");
        f("eorigin", Edge, Kind::Text, "i", "origin");
        f("eactive", Edge, Kind::Bool, "i", "active");
        f("eavailable", Edge, Kind::Bool, "i", "available");
        f("edirected", Edge, Kind::Bool, "e", "directed");
        f("egeometry", Edge, Kind::Geometry, "e", "linegeometry");
        f("evcategory", Event, Kind::Text, "ev", "category");
        f("evseriesuuid", Event, Kind::Text, "ev", "event_series_uuid");
        f("evtransactiontime", Event, Kind::Time, "ev", "created_on");
        f("evdescription", Event, Kind::Text, "ev", "description");
        f("evstart", Event, Kind::Time, "ev", "event_start");
        f("evend", Event, Kind::Time, "ev", "event_end");
        f("evorigin", Event, Kind::Text, "ev", "origin");
        f("evuuid", Event, Kind::Text, "ev", "uuid");
        f("evname", Event, Kind::Text, "ev", "name");
        f("evmetadata", Event, Kind::Json, "evm", "json");
        f("evldescription", Location, Kind::Text, "loc", "description");
        f("evlgeometry", Location, Kind::Geometry, "loc", "geometry");
        v
    })
}

/// Whether a column expression of a compiled query is never NULL: a `NOT NULL` column
/// (PostgreSQL's `ts_*` schema in `hub-store`) of a table that every route naming its
/// alias reads from or joins inner (`s`, `t`, `ts`, `me`, `mh`, `e`, `ev`; never `p`,
/// `o`, `d` or the metadata, provenance and location tables, which are joined `LEFT`).
/// An edge's own station (`i`) is left out on purpose: told its order needs no NULLs
/// first, PostgreSQL walks every station in order to find the few that are edges (99 of
/// 1,549 at demo scale 10), about 0.3 ms slower than sorting the edges.
pub(crate) fn never_null(expr: &str) -> bool {
    NEVER_NULL.contains(&expr)
}

/// The expressions [`never_null`] knows.
pub const NEVER_NULL: &[&str] = &[
    "s.stationtype",
    "s.stationcode",
    "s.name",
    "s.active",
    "s.available",
    "t.cname",
    "ts.period",
    "me.timestamp",
    "me.created_on",
    "mh.created_on",
    "e.directed",
    "ev.category",
    "ev.created_on",
    "ev.event_series_uuid",
    "ev.name",
    "ev.origin",
    "ev.uuid",
];

pub fn field(name: &str) -> Option<&'static Field> {
    fields().iter().find(|f| f.name == name)
}

/// Pointer names (tree nodes / select shortcuts) and the lists they expand to.
pub fn pointer(name: &str) -> Option<&'static [DefList]> {
    use DefList::*;
    Some(match name {
        "sparent" => &[Parent],
        "sdatatypes" => &[Datatype, Measurement, Value, Provenance],
        "smetadatahistory" => &[MetadataHistory],
        "tmeasurements" => &[Measurement, Value, Provenance],
        "mprovenance" => &[Provenance],
        "ebegin" => &[StationBegin],
        "eend" => &[StationEnd],
        "evlocation" => &[Location],
        "evprovenance" => &[Provenance],
        _ => return None,
    })
}
