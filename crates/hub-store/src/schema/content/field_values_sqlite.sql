-- Tags of the indexed field values (`hub_query::content::value_tags`) for documents
-- stored before migration 13; later writes add them from Rust. Per field: a string
-- value, or each string element of an array value; `Features.[*].Name` takes the
-- `Name` of each element (each member of an object, a single value itself).
INSERT OR IGNORE INTO content_tag (entity, id_key, kind, tag)
SELECT c.entity, c.id_key, 'value:' || f.path, v.value
FROM content c,
     (SELECT 'PublishedOn' AS path UNION ALL SELECT 'AccoTypeId'
      UNION ALL SELECT 'AccoCategoryId' UNION ALL SELECT 'BoardIds') f,
     json_each(c.doc, '$.' || f.path) v
WHERE json_type(c.doc, '$.' || f.path) IN ('text', 'array') AND v.type = 'text';
INSERT OR IGNORE INTO content_tag (entity, id_key, kind, tag)
SELECT c.entity, c.id_key, 'value:Features.[*].Name', v.value
FROM content c, json_each(c.doc, '$.Features') e, json_each(c.doc, e.fullkey || '.Name') v
WHERE json_type(c.doc, e.fullkey || '.Name') IN ('text', 'array') AND v.type = 'text';
