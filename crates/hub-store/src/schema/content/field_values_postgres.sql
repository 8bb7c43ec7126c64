-- Tags of the indexed field values (`hub_query::content::value_tags`) for documents
-- stored before migration 12; later writes add them from Rust. Per field: a string
-- value, or each string element of an array value; `Features.[*].Name` takes the
-- `Name` of each element (each member of an object, a single value itself).
INSERT INTO content_tag (entity, id_key, kind, tag)
SELECT c.entity, c.id_key, 'value:' || f.path, v #>> '{}'
FROM content c,
     (VALUES ('PublishedOn'), ('AccoTypeId'), ('AccoCategoryId'), ('BoardIds')) AS f(path),
     hub_rf_each(CASE WHEN jsonb_typeof(c.docb -> f.path) IN ('string', 'array') THEN c.docb -> f.path END) AS v
WHERE jsonb_typeof(v) = 'string'
ON CONFLICT DO NOTHING;
INSERT INTO content_tag (entity, id_key, kind, tag)
SELECT c.entity, c.id_key, 'value:Features.[*].Name', v #>> '{}'
FROM content c,
     hub_rf_each(c.docb -> 'Features') AS e,
     hub_rf_each(CASE WHEN jsonb_typeof(e -> 'Name') IN ('string', 'array') THEN e -> 'Name' END) AS v
WHERE jsonb_typeof(v) = 'string'
ON CONFLICT DO NOTHING;
