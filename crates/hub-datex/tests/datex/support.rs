//! Helpers shared by the test modules: fixtures, xmllint, a tiny XML tree, and
//! announcement documents shaped like the Content API's.

use std::path::PathBuf;
use std::process::Command;

use chrono::{DateTime, Duration, Utc};
use quick_xml::events::Event;
use quick_xml::Reader;
use serde_json::{json, Value};

pub fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

/// `shared/fixtures` beside the repository (or `HUB_FIXTURES`).
pub fn fixtures() -> PathBuf {
    std::env::var_os("HUB_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
        })
}

/// A fixture file, or `None` after printing why the test is skipped.
pub fn fixture(name: &str) -> Option<PathBuf> {
    let path = fixtures().join(name);
    if path.is_file() {
        Some(path)
    } else {
        println!("SKIPPED: fixture {} is absent", path.display());
        None
    }
}

/// Validates documents against the DATEX II v2.0 XSD with xmllint. Returns false (after
/// printing why) when xmllint or the schema is missing; panics with xmllint's messages
/// when a document is invalid.
pub fn validate(label: &str, documents: &[&[u8]]) -> bool {
    let Some(xsd) = fixture("datex/DATEXIISchema_2_2_0.xsd") else {
        return false;
    };
    if Command::new("xmllint").arg("--version").output().is_err() {
        println!("SKIPPED schema validation of {label}: xmllint is not installed (apt-get install libxml2-utils)");
        return false;
    }
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = documents
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let path = dir.path().join(format!("{label}-{i}.xml"));
            std::fs::write(&path, doc).unwrap();
            path
        })
        .collect();
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&xsd)
        .args(&files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{label}: xmllint rejects the document(s):\n{}",
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    true
}

/// An XML element with its attributes (qualified names as written), text and children.
#[derive(Debug, Clone, Default)]
pub struct El {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<El>,
}

impl El {
    pub fn parse(xml: &[u8]) -> El {
        let mut reader = Reader::from_reader(xml);
        let mut stack: Vec<El> = vec![El::default()];
        let mut buf = Vec::new();
        loop {
            match reader.read_event_into(&mut buf).expect("well-formed XML") {
                Event::Start(e) => stack.push(El::start(&e)),
                Event::Empty(e) => {
                    let el = El::start(&e);
                    stack.last_mut().unwrap().children.push(el);
                }
                Event::End(_) => {
                    let el = stack.pop().unwrap();
                    stack.last_mut().unwrap().children.push(el);
                }
                Event::Text(t) => stack
                    .last_mut()
                    .unwrap()
                    .text
                    .push_str(&t.unescape().unwrap()),
                Event::CData(t) => stack
                    .last_mut()
                    .unwrap()
                    .text
                    .push_str(std::str::from_utf8(&t).unwrap()),
                Event::Eof => break,
                _ => {}
            }
            buf.clear();
        }
        stack
            .pop()
            .unwrap()
            .children
            .into_iter()
            .next()
            .expect("a root element")
    }

    fn start(e: &quick_xml::events::BytesStart<'_>) -> El {
        El {
            name: String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
            attrs: e
                .attributes()
                .map(|a| {
                    let a = a.unwrap();
                    (
                        String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                        a.unescape_value().unwrap().into_owned(),
                    )
                })
                .collect(),
            ..El::default()
        }
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `xsi:type` whatever prefix the document binds to the XSI namespace.
    pub fn xsi_type(&self) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.ends_with(":type"))
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, name: &str) -> Option<&El> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a El> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// Follows a `/`-separated path of child names.
    pub fn at(&self, path: &str) -> Option<&El> {
        path.split('/').try_fold(self, |el, name| el.child(name))
    }

    pub fn text_at(&self, path: &str) -> Option<&str> {
        self.at(path).map(|e| e.text.as_str())
    }

    pub fn child_names(&self) -> Vec<&str> {
        self.children.iter().map(|c| c.name.as_str()).collect()
    }

    /// The situations of a d2LogicalModel document.
    pub fn situations(&self) -> Vec<&El> {
        self.at("payloadPublication")
            .map(|p| p.all("situation").collect())
            .unwrap_or_default()
    }

    /// `lang → text` of a MultilingualString element.
    pub fn values(&self) -> Vec<(String, String)> {
        self.child("values")
            .map(|v| {
                v.all("value")
                    .map(|v| (v.attr("lang").unwrap_or("").to_string(), v.text.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// An Announcement document in the Items shape of the reference fixture.
pub struct Doc {
    pub value: Value,
}

impl Doc {
    pub fn new(
        id: &str,
        source: &str,
        tag: &str,
        start: DateTime<Utc>,
        end: Option<DateTime<Utc>>,
    ) -> Doc {
        let prefix = if source.eq_ignore_ascii_case("A22") {
            "a22"
        } else {
            "provincebz"
        };
        let mut value = json!({
            "Id": format!("urn:announcements:{prefix}:{id}"),
            "TagIds": ["announcement:traffic-event", format!("traffic-event:{tag}")],
            "StartTime": start.to_rfc3339(),
            "FirstImport": (start - Duration::hours(1)).to_rfc3339(),
            "LastChange": (start - Duration::minutes(30)).to_rfc3339(),
            "_Meta": {"Source": source, "UpdateInfo": {"UpdateHistory": [{}]}},
            "Geo": {"position": {"Latitude": 46.5, "Longitude": 11.35}},
            "Mapping": {"ProviderProvinceBz": {"Id": format!("REF-{id}")}},
            "Detail": {
                "it": {"Title": format!("Evento {id}"), "BaseText": "tra Bolzano e Trento"},
                "de": {"Title": format!("Ereignis {id}"), "BaseText": "zwischen Bozen und Trient"}
            }
        });
        if let Some(end) = end {
            value["EndTime"] = json!(end.to_rfc3339());
        }
        Doc { value }
    }

    pub fn with(mut self, f: impl FnOnce(&mut Value)) -> Doc {
        f(&mut self.value);
        self
    }
}

/// Demo-like announcements: `n` per source (PROVINCE_BZ and A22) over all categories,
/// a third current, a third future, a third expired; every tenth without `Geo`; some
/// with very long texts, XML-special characters and an English or Ladin text.
pub fn demo_like(n: usize, now: DateTime<Utc>) -> Vec<Value> {
    let tags: Vec<&str> = hub_datex::CATEGORIES.iter().map(|c| c.tag).collect();
    let mut docs = Vec::new();
    for source in ["PROVINCE_BZ", "A22"] {
        for i in 0..n {
            let tag = tags[i % tags.len()];
            let (start, end) = match i % 3 {
                0 => (
                    now - Duration::hours(2 + i as i64),
                    Some(now + Duration::days(3)),
                ),
                1 => (
                    now + Duration::days(1 + i as i64 % 5),
                    Some(now + Duration::days(9)),
                ),
                _ => (now - Duration::days(20), Some(now - Duration::days(2))),
            };
            let doc = Doc::new(&format!("{source}-{i:04}"), source, tag, start, end).with(|v| {
                if i % 10 == 4 {
                    v.as_object_mut().unwrap().remove("Geo");
                }
                if i % 7 == 0 {
                    v["Detail"]["it"]["BaseText"] = json!(format!(
                        "Coda & rallentamenti <A22> \"Brennero\" l'uscita {}",
                        "lungo testo ".repeat(200)
                    ));
                }
                if i % 5 == 0 {
                    v["Detail"]["en"] =
                        json!({"Title": "Queue", "BaseText": "between Bolzano & Trento"});
                    v["Detail"]["lad"] = json!({"Title": "Coda"});
                }
                if i % 4 == 0 {
                    v["_Meta"]["UpdateInfo"]["UpdateHistory"] = json!([{}, {}, {}]);
                }
            });
            docs.push(doc.value);
        }
    }
    docs
}
