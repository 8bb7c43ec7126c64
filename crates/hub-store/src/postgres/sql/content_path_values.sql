-- Values of the configured `rawfilter` paths beside each document (see
-- `hub_query::content::rawfilter_index`). PostgreSQL cannot read an expression over
-- `docb` from an index without detoasting the document, so each row keeps the values
-- of its entity's configured paths in a small object: one member per path, `[value]`,
-- or `[]` where the path finds nothing. The compiler reads a member and, where the row
-- lacks it, the document, so the column only ever makes answers faster.
ALTER TABLE content ADD COLUMN path_values jsonb;

-- A statement over configured paths, or sorted by name, reads nothing else of a row but
-- its key and `shortname` (the compiler reads a document by its key where a row lacks
-- a member or a name): this index answers it without visiting the rows, whose
-- documents fill most of the table.
CREATE INDEX content_path_values ON content (entity, sort_key, id_key) INCLUDE (shortname, path_values);

-- The configured paths: the member's name (the path as SQLite spells it) and the strict
-- jsonpath that reads it. The server rewrites the rows at start from its configuration.
CREATE TABLE content_value_paths (
    entity text COLLATE "C" NOT NULL,
    path text COLLATE "C" NOT NULL,
    query jsonpath NOT NULL,
    PRIMARY KEY (entity, path)
);

-- Entities whose rows' values the configuration changed and that the server has not yet
-- finished filling (a fill stopped midway goes on at the next start).
CREATE TABLE content_value_fill (
    entity text COLLATE "C" PRIMARY KEY
);

-- The object for a document of `doc_entity` (NULL when its entity has no paths).
CREATE FUNCTION hub_path_values(doc_entity text, doc jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT jsonb_object_agg(p.path, CASE WHEN x.v IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(x.v) END)
    FROM content_value_paths p
    CROSS JOIN LATERAL jsonb_path_query_first(doc, p.query, '{}'::jsonb, true) AS x(v)
    WHERE p.entity = doc_entity
$$;

-- Every write of a document computes its values from the document written, so a member
-- present is always the document's current value.
CREATE FUNCTION hub_content_path_values() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.path_values := hub_path_values(NEW.entity, NEW.docb);
    RETURN NEW;
END
$$;

CREATE TRIGGER content_path_values BEFORE INSERT OR UPDATE OF docb ON content
    FOR EACH ROW EXECUTE FUNCTION hub_content_path_values();
