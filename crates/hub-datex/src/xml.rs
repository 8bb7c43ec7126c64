//! The DATEX II v2 SituationPublication writer: a streaming quick-xml writer, elements
//! in the order the XSD's sequences require, every text and attribute value escaped by
//! the writer and limited by [`crate::text`].

use std::io;

use chrono::{DateTime, Utc};
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use crate::feed::{Feed, Situation};
use crate::text::{clean, limit};
use crate::ProviderConfig;

/// Namespace of DATEX II 2.0 to 2.3.
pub const DATEX_NAMESPACE: &str = "http://datex2.eu/schema/2/2_0";
const XSI_NAMESPACE: &str = "http://www.w3.org/2001/XMLSchema-instance";

type W = Writer<Vec<u8>>;

/// Writes the document. Returns the bytes and the byte range of the `publicationTime`
/// element (the only part that changes when nothing else does).
pub(crate) fn write(
    feed: &Feed<'_>,
    capacity: usize,
) -> io::Result<(Vec<u8>, std::ops::Range<usize>)> {
    let mut w = Writer::new_with_indent(Vec::with_capacity(capacity), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut publication_time = 0..0;
    w.create_element("d2LogicalModel")
        .with_attribute(("xmlns", DATEX_NAMESPACE))
        .with_attribute(("xmlns:xsi", XSI_NAMESPACE))
        .with_attribute(("modelBaseVersion", "2"))
        .write_inner_content(|w| {
            w.create_element("exchange")
                .write_inner_content(|w| identifier(w, "supplierIdentification", feed.provider))?;
            w.create_element("payloadPublication")
                .with_attribute(("xsi:type", "SituationPublication"))
                .with_attribute(("lang", "it"))
                .write_inner_content(|w| {
                    let start = w.get_mut().len();
                    text(w, "publicationTime", &feed.zone.format_millis(feed.now))?;
                    publication_time = start..w.get_mut().len();
                    identifier(w, "publicationCreator", feed.provider)?;
                    for situation in &feed.situations {
                        write_situation(w, feed, situation)?;
                    }
                    Ok(())
                })?;
            Ok(())
        })?;
    Ok((w.into_inner(), publication_time))
}

fn text(w: &mut W, name: &str, value: &str) -> io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(value))?;
    Ok(())
}

/// An InternationalIdentifier: country and national identifier.
fn identifier(w: &mut W, name: &str, provider: &ProviderConfig) -> io::Result<()> {
    w.create_element(name).write_inner_content(|w| {
        text(w, "country", &provider.country)?;
        text(
            w,
            "nationalIdentifier",
            &limit(&provider.national_identifier),
        )
    })?;
    Ok(())
}

/// A MultilingualString: `values/value[@lang]`.
fn multilingual<'v>(
    w: &mut W,
    name: &str,
    values: impl IntoIterator<Item = (&'v str, &'v str)>,
) -> io::Result<()> {
    w.create_element(name).write_inner_content(|w| {
        w.create_element("values").write_inner_content(|w| {
            for (lang, value) in values {
                w.create_element("value")
                    .with_attribute(("lang", lang))
                    .write_text_content(BytesText::new(&limit(value)))?;
            }
            Ok(())
        })?;
        Ok(())
    })?;
    Ok(())
}

fn time(w: &mut W, feed: &Feed<'_>, name: &str, at: DateTime<Utc>) -> io::Result<()> {
    text(w, name, &feed.zone.format(at))
}

fn write_situation(w: &mut W, feed: &Feed<'_>, situation: &Situation<'_>) -> io::Result<()> {
    let a = &situation.announcement;
    let id = clean(a.id);
    let version = a.version.to_string();
    w.create_element("situation")
        .with_attribute(("id", id.as_ref()))
        .with_attribute(("version", version.as_str()))
        .write_inner_content(|w| {
            text(w, "overallSeverity", a.category.severity)?;
            w.create_element("headerInformation")
                .write_inner_content(|w| {
                    text(w, "confidentiality", "noRestriction")?;
                    text(w, "informationStatus", "real")?;
                    text(w, "urgency", "normalUrgency")
                })?;
            w.create_element("situationRecord")
                .with_attribute(("xsi:type", a.category.record.xsi_type()))
                .with_attribute(("id", id.as_ref()))
                .with_attribute(("version", version.as_str()))
                .write_inner_content(|w| write_record(w, feed, situation))?;
            Ok(())
        })?;
    Ok(())
}

fn write_record(w: &mut W, feed: &Feed<'_>, situation: &Situation<'_>) -> io::Result<()> {
    let a = &situation.announcement;
    let status = situation.status;
    if let Some(reference) = a.reference() {
        text(w, "situationRecordCreationReference", &limit(&reference))?;
    }
    time(w, feed, "situationRecordCreationTime", a.created)?;
    time(w, feed, "situationRecordVersionTime", a.changed)?;
    text(w, "probabilityOfOccurrence", status.probability)?;
    w.create_element("source").write_inner_content(|w| {
        text(w, "sourceCountry", &feed.provider.country)?;
        text(
            w,
            "sourceIdentification",
            &limit(&feed.provider.national_identifier),
        )?;
        multilingual(w, "sourceName", [("it", a.source)])?;
        text(w, "sourceType", "roadAuthorities")?;
        text(w, "reliable", "true")
    })?;
    w.create_element("validity").write_inner_content(|w| {
        text(w, "validityStatus", status.validity)?;
        if status.overrunning {
            text(w, "overrunning", "true")?;
        }
        w.create_element("validityTimeSpecification")
            .write_inner_content(|w| {
                time(w, feed, "overallStartTime", a.start)?;
                if let Some(end) = a.end {
                    time(w, feed, "overallEndTime", end)?;
                }
                Ok(())
            })?;
        Ok(())
    })?;
    let comments = a.comments();
    if !comments.is_empty() {
        w.create_element("generalPublicComment")
            .write_inner_content(|w| {
                multilingual(
                    w,
                    "comment",
                    comments.iter().map(|(lang, text)| (*lang, text.as_str())),
                )?;
                time(w, feed, "commentDateTime", a.changed)?;
                text(w, "commentType", "description")
            })?;
    }
    let location = w
        .create_element("groupOfLocations")
        .with_attribute(("xsi:type", "Point"));
    match a.position() {
        Some((latitude, longitude)) => {
            location.write_inner_content(|w| {
                w.create_element("pointByCoordinates")
                    .write_inner_content(|w| {
                        w.create_element("pointCoordinates")
                            .write_inner_content(|w| {
                                text(w, "latitude", &latitude.to_string())?;
                                text(w, "longitude", &longitude.to_string())
                            })?;
                        Ok(())
                    })?;
                Ok(())
            })?;
        }
        // No coordinates: a Point without pointByCoordinates (all of Point's children
        // are optional), never an invented 0,0.
        None => {
            location.write_empty()?;
        }
    }
    for (name, value) in a.category.record.elements() {
        text(w, name, value)?;
    }
    Ok(())
}
